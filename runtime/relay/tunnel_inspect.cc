// TunnelInspector: see tunnel_inspect.h.
#include "runtime/relay/tunnel_inspect.h"
#include "policy/http_token.h"

#include <algorithm>

#include "policy/net_rules.h"
#include "runtime/relay/tls_sni.h"

namespace oishell::relay {
namespace {

constexpr size_t kQuote = 256;  // the most of a client's text quoted in a reason

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), ascii_lower);
  return out;
}

// Printable for a reason: the first bytes, control and non-ASCII bytes as \xNN.
std::string quote(std::string_view bytes, size_t max = 16) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes.substr(0, max)) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

// The authority of an absolute-form target ("http://host:port/path"), or nullopt when `target` is not one.
std::optional<std::string_view> absolute_authority(std::string_view target) {
  size_t scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return std::nullopt;
  std::string scheme = lower(target.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") return std::nullopt;
  std::string_view rest = target.substr(scheme_end + 3);
  return rest.substr(0, rest.find_first_of("/?#"));
}

// Whether a comma-separated header value lists `token` (case-insensitive).
bool lists_token(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (lower(item) == token) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

TunnelInspector::TunnelInspector(std::string host, uint16_t port, size_t max_head_bytes)
    : host_(std::move(host)), port_(port), ip_destination_(IpAddress::parse(host_).has_value()),
      max_head_(max_head_bytes) {}

std::string TunnelInspector::destination() const {
  return (host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

InspectStep TunnelInspector::refuse(std::string rule, std::string reason) const {
  InspectStep step;
  step.state = InspectStep::State::refused;
  step.rule = "inspection: " + std::move(rule);
  step.reason = std::move(reason);
  return step;
}

bool TunnelInspector::names_tunnel(std::string_view authority) const {
  if (authority.find('@') != std::string_view::npos) return false;
  auto parsed = parse_authority(authority, port_);
  return parsed && parsed->host == host_ && parsed->port == port_;
}

InspectStep TunnelInspector::inspect(std::string_view fresh, bool eof) {
  if (mode_ == Mode::start) {
    if (fresh.empty()) return {};  // nothing yet (or a client that ended without sending: nothing to check)
    if (static_cast<unsigned char>(fresh[0]) == 0x16) {
      mode_ = Mode::tls;
    } else if (is_tchar(fresh[0])) {
      mode_ = Mode::http;
    } else {
      return refuse("not TLS or HTTP", "the first bytes (" + quote(fresh) +
                                           ") are neither a TLS ClientHello nor an HTTP/1.x request");
    }
  }
  switch (mode_) {
    case Mode::tls:
      return inspect_tls(fresh, eof);
    case Mode::http:
      return inspect_http(fresh, eof);
    case Mode::opaque:
    case Mode::start:
      break;
  }
  InspectStep pass;
  pass.state = InspectStep::State::opaque;
  return pass;
}

InspectStep TunnelInspector::inspect_tls(std::string_view fresh, bool eof) {
  SniResult sni = peek_client_hello_sni(fresh, max_head_);
  switch (sni.status) {
    case SniStatus::need_more:
      if (eof) return refuse("incomplete TLS ClientHello", "the client ended before its ClientHello was complete");
      if (fresh.size() >= max_head_ + 1024) {
        return refuse("malformed TLS ClientHello", "ClientHello larger than the limit");
      }
      return {};
    case SniStatus::not_tls:
      return refuse("not TLS or HTTP", "the first bytes (" + quote(fresh) +
                                           ") are neither a TLS ClientHello nor an HTTP/1.x request");
    case SniStatus::malformed:
      return refuse("malformed TLS ClientHello", "malformed TLS ClientHello: " + sni.error);
    case SniStatus::no_sni:
      if (!ip_destination_) {
        return refuse("TLS without server name",
                      "TLS ClientHello without a server name (SNI): the site it asks for cannot be checked against "
                      "the requested host `" + host_ + "`");
      }
      break;
    case SniStatus::found: {
      if (ip_destination_) {
        return refuse("TLS server name on an IP destination",
                      "TLS server name `" + quote(sni.name, kQuote) + "` on a connection to the address " + host_ +
                          ": a name there picks a site that cannot be checked");
      }
      auto name = normalise_host(sni.name);
      if (!name || *name != host_) {
        return refuse("TLS server name mismatch", "TLS server name `" + quote(sni.name, kQuote) +
                                                      "` does not match the requested host `" + host_ + "`");
      }
      break;
    }
  }
  mode_ = Mode::opaque;
  InspectStep pass;
  pass.state = InspectStep::State::opaque;
  return pass;
}

InspectStep TunnelInspector::inspect_http(std::string_view fresh, bool eof) {
  InspectStep step;
  size_t used = 0;
  while (used < fresh.size()) {
    std::string_view rest = fresh.substr(used);
    if (body_ == Body::length) {
      size_t take = static_cast<size_t>(std::min<uint64_t>(body_left_, rest.size()));
      used += take;
      body_left_ -= take;
      if (body_left_ == 0) body_ = Body::none;
      continue;
    }
    if (body_ == Body::chunked) {
      auto took = chunked_.feed(rest);
      if (!took) return refuse("malformed HTTP request", "chunked request body: " + took.status().message());
      used += *took;
      if (chunked_.done()) body_ = Body::none;
      continue;
    }
    // A request head. Refuse early what can never become one (another protocol's greeting): the method is
    // checked as it arrives, the request line as soon as it is complete. Blank lines may precede a request
    // (RFC 9112 2.2; parse_request_head skips them).
    std::string_view line = rest;
    while (line.starts_with("\r\n")) line.remove_prefix(2);
    std::string_view method = line.substr(0, line.find(' '));
    bool method_ok = method.empty() ? line.empty() : std::all_of(method.begin(), method.end(), is_tchar);
    if (!method_ok && line != "\r") {
      return refuse("not TLS or HTTP", "the bytes (" + quote(line) + ") are not an HTTP/1.x request line");
    }
    if (size_t eol = line.find("\r\n"); eol != std::string_view::npos) {
      HeadParse request_line = parse_request_head(std::string(line.substr(0, eol)) + "\r\n\r\n", max_head_ + 4);
      if (request_line.status != HeadStatus::complete) {
        return refuse("not TLS or HTTP", "`" + quote(line.substr(0, eol), kQuote) +
                                             "` is not an HTTP/1.x request line: " + request_line.error);
      }
    }
    HeadParse parsed = parse_request_head(rest, max_head_);
    switch (parsed.status) {
      case HeadStatus::incomplete:
        if (eof) return refuse("incomplete HTTP request", "the client ended inside a request head");
        step.released = used;
        return step;
      case HeadStatus::too_large:
      case HeadStatus::malformed:
        return refuse("malformed HTTP request", parsed.error);
      case HeadStatus::complete:
        break;
    }
    InspectStep checked = check_request(parsed.head);
    if (checked.state == InspectStep::State::refused) return checked;
    used += parsed.consumed;
    if (mode_ == Mode::opaque) {
      checked.state = InspectStep::State::opaque;
      return checked;
    }
  }
  step.released = used;
  return step;
}

InspectStep TunnelInspector::check_request(const HttpRequestHead& head) {
  const std::string& target = head.target;
  if (head.method == "CONNECT") {
    return refuse("CONNECT in a tunnel",
                  "CONNECT " + quote(target, kQuote) + " inside the tunnel to " + destination() +
                      " would ask the server to go elsewhere");
  }
  if (target != "*" && !target.starts_with("/")) {
    auto authority = absolute_authority(target);
    if (!authority || !names_tunnel(*authority)) {
      return refuse("HTTP request target mismatch", "request target `" + quote(target, kQuote) +
                                                        "` is not on the requested host " + destination());
    }
  }
  size_t hosts = head.count("host");
  if (hosts != 1) {
    return refuse("HTTP Host header", hosts == 0 ? "HTTP request without a Host header: the site it asks for cannot "
                                                   "be checked against " + destination()
                                                 : "several Host headers");
  }
  const std::string& host = *head.header("host");
  if (!names_tunnel(host)) {
    return refuse("HTTP Host mismatch", "HTTP Host `" + quote(host, kQuote) +
                                            "` does not match the requested host " + destination());
  }
  auto framing = request_body_framing(head);
  if (!framing) return refuse("malformed HTTP request", framing.status().message());
  body_ = framing->kind == BodyKind::chunked ? Body::chunked
          : framing->kind == BodyKind::length ? Body::length
                                              : Body::none;
  body_left_ = framing->length;
  chunked_ = ChunkedScanner();
  if (const std::string* upgrade = head.header("upgrade")) {
    if (lists_token(*upgrade, "h2c")) {
      return refuse("HTTP/2 upgrade", "Upgrade: h2c would carry requests for any host in HTTP/2 frames");
    }
    mode_ = Mode::opaque;  // a WebSocket (or other protocol) follows once the server agrees
  }
  return {};
}

}  // namespace oishell::relay
