#include "runtime/relay/http_parser.h"
#include "policy/http_token.h"

#include <algorithm>
#include <charconv>

#include "policy/net_rules.h"
#include "runtime/relay/http_head_lines.h"

namespace oishell::relay {
namespace {

constexpr size_t kMaxRequestLine = 8 * 1024;
constexpr size_t kMaxChunkLine = 4 * 1024;


// Control characters other than HTAB: 0x00-0x08, 0x0a-0x1f and DEL.
bool is_forbidden_in_value(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u < 0x20 && u != '\t') || u == 0x7f;
}

bool parse_request_line(std::string_view line, HttpRequestHead& head, std::string& error) {
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    error = "request line is not `METHOD target HTTP/1.x`";
    return false;
  }
  head.method = line.substr(0, sp1);
  head.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  head.version = line.substr(sp2 + 1);
  if (!is_token(head.method)) {
    error = "bad method";
    return false;
  }
  if (head.target.empty() ||
      std::any_of(head.target.begin(), head.target.end(), [](char c) { return c <= 0x20 || c == 0x7f; })) {
    error = "bad request target";
    return false;
  }
  if (head.version != "HTTP/1.1" && head.version != "HTTP/1.0") {
    error = "unsupported HTTP version `" + head.version.substr(0, 16) + "`";
    return false;
  }
  return true;
}

bool parse_header_line(std::string_view line, HttpRequestHead& head, std::string& error) {
  if (line.front() == ' ' || line.front() == '\t') {
    error = "obsolete header line folding";
    return false;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) {
    error = "bad header line";
    return false;
  }
  std::string_view value = trim_ows(line.substr(colon + 1));
  // RFC 9110 5.5: a field value is visible characters, spaces and tabs (and obs-text); a control character is
  // refused, not passed on for a server to interpret differently.
  if (std::any_of(value.begin(), value.end(), is_forbidden_in_value)) {
    error = "control character in the value of header `" + std::string(line.substr(0, colon)).substr(0, 64) + "`";
    return false;
  }
  head.headers.push_back({std::string(line.substr(0, colon)), std::string(value)});
  return true;
}

}  // namespace

const std::string* HttpRequestHead::header(std::string_view name) const {
  for (const HttpHeader& h : headers) {
    if (iequals(h.name, name)) return &h.value;
  }
  return nullptr;
}

size_t HttpRequestHead::count(std::string_view name) const {
  return std::count_if(headers.begin(), headers.end(), [&](const HttpHeader& h) { return iequals(h.name, name); });
}

HeadParse parse_request_head(std::string_view data, size_t max_bytes) {
  HeadParse result;
  size_t start = 0;
  while (data.substr(start, 2) == "\r\n") start += 2;  // blank lines before a request are ignored (RFC 9112 2.2)
  if (start > 64) {
    result.status = HeadStatus::malformed;
    result.error = "too many blank lines";
    return result;
  }
  size_t end = data.find("\r\n\r\n", start);
  if (end != std::string_view::npos && end + 4 > max_bytes) end = std::string_view::npos;
  if (end == std::string_view::npos) {
    size_t first_eol = data.find("\r\n", start);
    if (data.size() >= max_bytes || (first_eol == std::string_view::npos && data.size() - start > kMaxRequestLine)) {
      result.status = HeadStatus::too_large;
      result.error = "request head larger than " + std::to_string(max_bytes) + " bytes";
      return result;
    }
    for (size_t i = start; i < data.size(); ++i) {  // fail early on what can never become a valid head
      if (data[i] == '\0' || (data[i] == '\n' && (i == 0 || data[i - 1] != '\r'))) {
        result.status = HeadStatus::malformed;
        result.error = "bare LF or NUL in the request head";
        return result;
      }
    }
    return result;
  }
  std::string_view block = data.substr(start, end - start);
  if (block.find('\0') != std::string_view::npos) {
    result.status = HeadStatus::malformed;
    result.error = "NUL in the request head";
    return result;
  }
  bool first = true;
  size_t pos = 0;
  while (pos <= block.size()) {
    size_t eol = block.find("\r\n", pos);
    std::string_view line = block.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    if (line.find('\r') != std::string_view::npos || line.find('\n') != std::string_view::npos) {
      result.status = HeadStatus::malformed;
      result.error = "bare CR or LF in the request head";
      return result;
    }
    bool ok = first ? (line.size() <= kMaxRequestLine && parse_request_line(line, result.head, result.error))
                    : (!line.empty() && parse_header_line(line, result.head, result.error));
    if (!ok) {
      if (result.error.empty()) result.error = first ? "request line too long" : "empty header line";
      result.status = HeadStatus::malformed;
      return result;
    }
    first = false;
    if (eol == std::string_view::npos) break;
    pos = eol + 2;
  }
  result.status = HeadStatus::complete;
  result.consumed = end + 4;
  return result;
}

Result<Authority> parse_authority(std::string_view text, std::optional<uint16_t> default_port) {
  std::string_view host = text;
  std::string_view port_text;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return Status::error("bad authority `" + std::string(text) + "`");
    host = text.substr(0, close + 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return Status::error("bad authority `" + std::string(text) + "`");
      port_text = text.substr(close + 2);
      has_port = true;
    }
  } else if (size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    has_port = true;
  }
  Authority a;
  auto name = normalise_host(host);
  if (!name || host.empty()) return Status::error("bad host `" + std::string(host.substr(0, 256)) + "`");
  a.host = *name;
  if (has_port) {
    unsigned port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 ||
        port > 65535) {
      return Status::error("bad port `" + std::string(port_text.substr(0, 16)) + "`");
    }
    a.port = static_cast<uint16_t>(port);
  } else if (default_port) {
    a.port = *default_port;
  } else {
    return Status::error("`" + std::string(text.substr(0, 256)) + "` has no port");
  }
  return a;
}

Result<AbsoluteTarget> parse_absolute_target(std::string_view target) {
  constexpr std::string_view kHttp = "http://";
  if (target.size() < kHttp.size() || !iequals(target.substr(0, kHttp.size()), kHttp)) {
    if (target.starts_with("/")) return Status::error("origin-form target: send absolute-form (http://host/path)");
    return Status::error("only http:// targets are forwarded (use CONNECT for https)");
  }
  std::string_view rest = target.substr(kHttp.size());
  size_t path_start = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, path_start);
  if (authority.find('@') != std::string_view::npos) return Status::error("userinfo in the target is refused");
  auto origin = parse_authority(authority, 80);
  if (!origin) return origin.status();
  AbsoluteTarget t;
  t.origin = std::move(*origin);
  std::string_view path = path_start == std::string_view::npos ? "" : rest.substr(path_start);
  if (size_t hash = path.find('#'); hash != std::string_view::npos) path = path.substr(0, hash);
  t.path = path.empty() || path.front() != '/' ? "/" + std::string(path) : std::string(path);
  return t;
}

Result<BodyFraming> request_body_framing(const HttpRequestHead& head) {
  BodyFraming framing;
  const std::string* te = head.header("transfer-encoding");
  size_t cl_count = head.count("content-length");
  if (te) {
    // RFC 9112 6.1: HTTP/1.0 has no transfer codings; a server may read such a body either way (faulty framing).
    if (head.version == "HTTP/1.0") return Status::error("Transfer-Encoding in an HTTP/1.0 request");
    if (cl_count > 0) return Status::error("both Transfer-Encoding and Content-Length");
    if (head.count("transfer-encoding") != 1 || !iequals(trim_ows(*te), "chunked")) {
      return Status::error("unsupported Transfer-Encoding `" + te->substr(0, 64) + "`");
    }
    framing.kind = BodyKind::chunked;
    return framing;
  }
  if (cl_count == 0) return framing;
  std::optional<uint64_t> length;
  for (const HttpHeader& h : head.headers) {
    if (!iequals(h.name, "content-length")) continue;
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(h.value.data(), h.value.data() + h.value.size(), value);
    if (h.value.empty() || ec != std::errc() || end != h.value.data() + h.value.size()) {
      return Status::error("bad Content-Length `" + h.value.substr(0, 32) + "`");
    }
    if (length && *length != value) return Status::error("conflicting Content-Length headers");
    length = value;
  }
  framing.kind = *length == 0 ? BodyKind::none : BodyKind::length;
  framing.length = *length;
  return framing;
}

std::string serialise_forward_head(const HttpRequestHead& head, std::string_view path) {
  std::string out;
  out.reserve(256);
  out.append(head.method).append(" ").append(path).append(" ").append(head.version).append("\r\n");
  for (const HttpHeader& h : head.headers) {
    if (iequals(h.name, "proxy-connection") || iequals(h.name, "proxy-authorization")) continue;
    out.append(h.name).append(": ").append(h.value).append("\r\n");
  }
  out.append("\r\n");
  return out;
}

std::string http_error_response(int code, std::string_view reason, std::string_view body) {
  std::string text(body);
  text += "\n";
  std::string out = "HTTP/1.1 " + std::to_string(code) + " " + std::string(reason) + "\r\n";
  out += "Content-Type: text/plain; charset=utf-8\r\n";
  out += "Content-Length: " + std::to_string(text.size()) + "\r\n";
  out += "Connection: close\r\nProxy-Agent: oishell\r\n\r\n";
  out += text;
  return out;
}

ChunkedScanner::Part ChunkedScanner::part() const {
  switch (state_) {
    case State::size_line:
    case State::data_crlf: return Part::framing;
    case State::data: return Part::data;
    case State::trailer_line: return Part::trailer;
    case State::done: return Part::done;
  }
  return Part::done;
}

Result<size_t> ChunkedScanner::feed(std::string_view data) {
  size_t used = 0;
  while (used < data.size() && state_ != State::done) {
    switch (state_) {
      case State::size_line:
      case State::trailer_line:
      case State::data_crlf: {
        char c = data[used++];
        line_.push_back(c);
        if (line_.size() > kMaxChunkLine) return Status::error("chunk line too long");
        if (c != '\n') break;
        if (line_.size() < 2 || line_[line_.size() - 2] != '\r') return Status::error("bare LF in a chunked body");
        std::string_view line(line_.data(), line_.size() - 2);
        if (state_ == State::data_crlf) {
          if (!line.empty()) return Status::error("missing CRLF after chunk data");
          state_ = State::size_line;
        } else if (state_ == State::trailer_line) {
          if (line.empty()) state_ = State::done;
        } else {
          std::string_view digits = line.substr(0, line.find_first_of(";\t "));
          uint64_t size = 0;
          auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size, 16);
          if (digits.empty() || digits.size() > 15 || ec != std::errc() || end != digits.data() + digits.size()) {
            return Status::error("bad chunk size");
          }
          remaining_ = size;
          state_ = size == 0 ? State::trailer_line : State::data;
        }
        line_.clear();
        break;
      }
      case State::data: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size() - used));
        used += take;
        remaining_ -= take;
        if (remaining_ == 0) state_ = State::data_crlf;
        break;
      }
      case State::done:
        break;
    }
  }
  return used;
}

}  // namespace oishell::relay
