// HostRule parsing and matching, host-name normalisation, and the relay's decision functions (policy/net_rules.h).
// Pure functions: no syscalls, no DNS.
#include "policy/net_rules.h"

#include <algorithm>
#include <charconv>

#include "policy/net_address_class.h"
#include "policy/sandbox_spec.h"

namespace oishell {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_hex_number(std::string_view s) {
  if (s.size() < 2 || s[0] != '0' || s[1] != 'x') return false;
  return std::all_of(s.begin() + 2, s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Why `name` (lower-case, no trailing dot) is not a valid host name, or empty when it is. A numeric last label
// ("127.1", "2130706433", "0x7f.1") is refused: resolvers read those as IPv4 numbers.
std::string invalid_name_reason(std::string_view name) {
  if (name.empty()) return "empty host name";
  if (name.size() > 253) return "host name longer than 253 characters";
  size_t start = 0;
  std::string_view last;
  while (true) {
    size_t dot = name.find('.', start);
    std::string_view label = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty()) return "empty label in host name";
    if (label.size() > 63) return "label longer than 63 characters";
    for (char c : label) {
      if (!is_name_char(c)) return std::string("character `") + c + "` not allowed in a host name";
    }
    last = label;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (all_digits(last) || is_hex_number(last)) return "numeric last label (write IP addresses in dotted form)";
  return {};
}

std::string lower_strip_dot(std::string_view host) {
  std::string out(host);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

Result<uint16_t> parse_port(std::string_view text, std::string_view whole) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1 || value > 65535) {
    return Status::error("`" + std::string(whole) + "`: port `" + std::string(text) + "` is not in 1..65535");
  }
  return static_cast<uint16_t>(value);
}

// Fills kind/host/cidr of `rule` from a host pattern without a port.
Status parse_host_pattern(std::string_view pattern, std::string_view whole, HostRule& rule) {
  auto bad = [&](std::string_view why) {
    return Status::error("host rule `" + std::string(whole) + "`: " + std::string(why));
  };
  if (pattern.empty()) return bad("empty host");
  if (pattern.find('/') != std::string_view::npos) {
    auto cidr = Cidr::parse(pattern);
    if (!cidr) return cidr.status().with_context("host rule `" + std::string(whole) + "`");
    rule.kind = HostRule::Kind::ip_cidr;
    rule.cidr = *cidr;
    rule.host = cidr->to_string();
    return Status::ok();
  }
  if (auto ip = IpAddress::parse(pattern)) {
    rule.kind = HostRule::Kind::ip_cidr;
    rule.cidr = Cidr{*ip, ip->family == IpAddress::Family::v4 ? 32 : 128};
    rule.host = ip->to_string();
    return Status::ok();
  }
  bool wildcard = pattern.size() >= 2 && pattern[0] == '*' && pattern[1] == '.';
  if (pattern == "*") return bad("`*` is not a pattern (use allow_all)");
  std::string name = lower_strip_dot(wildcard ? pattern.substr(2) : pattern);
  if (IpAddress::parse(name)) return bad("`*.` cannot precede an IP address");
  if (std::string why = invalid_name_reason(name); !why.empty()) {
    if (name.find('*') != std::string::npos) return bad("`*` is only allowed as a leading `*.`");
    return bad(why);
  }
  if (wildcard && name.find('.') == std::string::npos) {
    return bad("`*." + name + "` would cover a whole top-level domain");
  }
  rule.kind = wildcard ? HostRule::Kind::suffix : HostRule::Kind::exact;
  rule.host = std::move(name);
  return Status::ok();
}

}  // namespace

Result<HostRule> HostRule::parse(std::string_view text) {
  HostRule rule;
  rule.text = std::string(text);
  std::string_view host = text;
  std::string_view port_text;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return Status::error("host rule `" + rule.text + "`: missing `]`");
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Status::error("host rule `" + rule.text + "`: expected `:port` after `]`");
      port_text = rest.substr(1);
      has_port = true;
    }
    if (host.find(':') == std::string_view::npos) {
      return Status::error("host rule `" + rule.text + "`: brackets are only for IPv6 addresses");
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    size_t colon = text.find(':');
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    has_port = true;
  }
  if (has_port && port_text.find(',') != std::string_view::npos) {
    return Status::error("host rule `" + rule.text + "`: several ports go in the object form {host:, ports: [..]}");
  }
  OI_TRY(parse_host_pattern(host, text, rule));
  if (has_port) {
    auto port = parse_port(port_text, text);
    if (!port) return port.status();
    rule.ports.push_back(*port);
  }
  return rule;
}

Result<HostRule> HostRule::parse(std::string_view host, std::vector<uint16_t> ports) {
  HostRule rule;
  std::string_view pattern = host;
  if (pattern.size() >= 2 && pattern.front() == '[' && pattern.back() == ']') {
    pattern = pattern.substr(1, pattern.size() - 2);
  }
  if (std::count(host.begin(), host.end(), ':') == 1) {
    return Status::error("host rule `" + std::string(host) + "`: with a `ports:` list the host takes no `:port`");
  }
  OI_TRY(parse_host_pattern(pattern, host, rule));
  for (uint16_t p : ports) {
    if (p == 0) return Status::error("host rule `" + std::string(host) + "`: port 0 is not in 1..65535");
  }
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  rule.ports = std::move(ports);
  rule.text = std::string(host);
  for (size_t i = 0; i < rule.ports.size(); ++i) {
    rule.text += (i == 0 ? ":" : ",") + std::to_string(rule.ports[i]);
  }
  return rule;
}

bool HostRule::matches(std::string_view normalised_host, uint16_t port) const {
  if (!ports.empty() && std::find(ports.begin(), ports.end(), port) == ports.end()) return false;
  auto ip = IpAddress::parse(normalised_host);
  switch (kind) {
    case Kind::ip_cidr:
      return ip && cidr && cidr->contains(*ip);
    case Kind::exact:
      return !ip && normalised_host == host;
    case Kind::suffix:
      // `*.example.org` covers every name below example.org, at any depth, but not example.org itself.
      return !ip && normalised_host.size() > host.size() + 1 && normalised_host.ends_with(host) &&
             normalised_host[normalised_host.size() - host.size() - 1] == '.';
  }
  return false;
}

std::optional<std::string> normalise_host(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    auto ip = IpAddress::parse(host.substr(1, host.size() - 2));
    if (!ip || ip->family != IpAddress::Family::v6) return std::nullopt;
    return ip->to_string();
  }
  std::string name = lower_strip_dot(host);
  if (auto ip = IpAddress::parse(name)) return ip->to_string();
  if (!invalid_name_reason(name).empty()) return std::nullopt;
  return name;
}

namespace {

// Whether `rule` covers `host` at `port`, or at any port of its own when `port` is empty (a name has no port).
bool covers(const HostRule& rule, std::string_view host, std::optional<uint16_t> port) {
  if (port) return rule.matches(host, *port);
  return rule.matches(host, rule.ports.empty() ? 0 : rule.ports.front());
}

// The allow decision for `host` when some allow rule (or allow_all) matches, else nullopt. Several rules may match:
// each is a grant, and a grant without inspection is the larger one, so an uninspected match decides (the first
// such rule), else the first match, else allow_all (inspected).
// "allow example.com:443", "allow udp ntp.example:123".
std::string allow_text(const HostRule& rule) {
  return rule.protocol == HostRule::Protocol::udp ? "allow udp " + rule.text : "allow " + rule.text;
}

// `protocol` empty: rules of either protocol count (a name's look-up).
std::optional<NetDecision> allow_decision(const NetworkSpec& spec, std::string_view host,
                                          std::optional<uint16_t> port,
                                          std::optional<HostRule::Protocol> protocol) {
  const HostRule* first = nullptr;
  for (const HostRule& rule : spec.allow) {
    if (protocol && rule.protocol != *protocol) continue;
    if (!covers(rule, host, port)) continue;
    if (rule.protocol == HostRule::Protocol::udp) {
      if (protocol) return NetDecision{NetDecision::Verdict::allow, allow_text(rule), false};
      if (!first) first = &rule;
      continue;
    }
    if (!rule.inspect) return NetDecision{NetDecision::Verdict::allow, allow_text(rule), false};
    if (!first) first = &rule;
  }
  if (spec.allow_all && protocol != HostRule::Protocol::udp) {
    return NetDecision{NetDecision::Verdict::allow, "allow_all", true};
  }
  if (first) return NetDecision{NetDecision::Verdict::allow, allow_text(*first), true};
  return std::nullopt;
}

}  // namespace

std::string_view tls_name(HostRule::Tls tls) { return tls == HostRule::Tls::terminate ? "terminate" : "passthrough"; }

std::string_view protocol_name(HostRule::Protocol protocol) {
  return protocol == HostRule::Protocol::udp ? "udp" : "tcp";
}

NetDecision decide(const NetworkSpec& spec, std::string_view host, uint16_t port, HostRule::Protocol protocol) {
  for (const HostRule& rule : spec.deny) {
    if (rule.matches(host, port)) return {NetDecision::Verdict::deny, "deny " + rule.text};
  }
  if (auto allowed = allow_decision(spec, host, port, protocol)) return *allowed;
  if (protocol == HostRule::Protocol::udp) return {NetDecision::Verdict::deny, "udp: no udp rule allows it"};
  switch (spec.on_unlisted) {
    case OnUnlisted::deny:
      return {NetDecision::Verdict::deny, "on_unlisted: deny"};
    case OnUnlisted::ask:
      return {NetDecision::Verdict::ask, "on_unlisted: ask"};
  }
  return {NetDecision::Verdict::deny, "on_unlisted: deny"};
}

bool is_localhost_name(std::string_view name) { return name == "localhost" || name.ends_with(".localhost"); }

const std::vector<IpAddress>& localhost_addresses() {
  static const std::vector<IpAddress> kLoopback = {*IpAddress::parse("127.0.0.1"), *IpAddress::parse("::1")};
  return kLoopback;
}

NetDecision decide_name(const NetworkSpec& spec, std::string_view host) {
  for (const HostRule& rule : spec.deny) {
    if (rule.ports.empty() && rule.matches(host, 0)) return {NetDecision::Verdict::deny, "deny " + rule.text};
  }
  if (auto allowed = allow_decision(spec, host, std::nullopt, std::nullopt)) return *allowed;
  if (spec.on_unlisted == OnUnlisted::ask) return {NetDecision::Verdict::ask, "on_unlisted: ask"};
  return {NetDecision::Verdict::deny, "on_unlisted: deny"};
}

std::string check_resolved_address(const NetworkSpec& spec, const IpAddress& address) {
  const IpAddress plain = unmap_v4(address).value_or(address);
  const auto& own_addresses = spec.host_addresses;
  const bool own = std::find(own_addresses.begin(), own_addresses.end(), plain) != own_addresses.end();
  const std::string_view metadata = metadata_endpoint(address);
  const std::string_view what = special_address_class(address);
  if (what.empty() && !own) return {};
  for (const Cidr& cidr : spec.allow_private) {
    if (!cidr.contains(address)) continue;
    // A metadata endpoint is exempted only by an entry naming it, not by a range that happens to hold it.
    bool exact = cidr.prefix_len == (cidr.base.family == IpAddress::Family::v4 ? 32 : 128);
    if (!metadata.empty() && !exact) continue;
    return {};
  }
  if (!metadata.empty()) {
    return address.to_string() + " is " + std::string(metadata) +
           "; only an allow_private entry naming it exactly (/32 or /128) exempts it";
  }
  std::string is = what.empty() ? "" : std::string(what) + ", ";
  if (own) return address.to_string() + " is " + is + "an address of this machine, and not covered by allow_private";
  return address.to_string() + " is " + std::string(what) + " and not covered by allow_private";
}

std::string check_known_destination(const NetworkSpec& spec, const std::string& host) {
  std::optional<IpAddress> address = IpAddress::parse(host);
  if (!address) {
    auto pin = spec.hosts.find(host);
    if (pin == spec.hosts.end()) return {};
    address = IpAddress::parse(pin->second);
    if (!address) return {};  // refused later, with its own message (a pin that is not an address)
  }
  return check_resolved_address(spec, *address);
}

}  // namespace oishell
