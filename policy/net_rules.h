#pragma once
// Network rules as data, and the pure functions that decide on them (used by the policy validator, `explain`,
// and the relay). No syscalls, no DNS.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace oishell {

struct IpAddress {
  enum class Family { v4, v6 };
  Family family = Family::v4;
  std::array<uint8_t, 16> bytes{};  // v4 uses the first 4

  static std::optional<IpAddress> parse(std::string_view text);  // "127.0.0.1", "::1" (no brackets)
  std::string to_string() const;
  // Loopback, RFC 1918, CGNAT 100.64/10, link-local, multicast, unspecified, broadcast, IPv6 ULA fc00::/7,
  // IPv6 link-local, and the IPv4-mapped/compatible forms of all of these.
  bool is_private_or_special() const;
  bool operator==(const IpAddress&) const = default;
};

struct Cidr {
  IpAddress base;
  int prefix_len = 0;
  static Result<Cidr> parse(std::string_view text);  // "127.0.0.0/8", "::1/128", a bare IP = full-length prefix
  bool contains(const IpAddress& ip) const;  // an IPv4-mapped IPv6 address is matched as its IPv4 form
  std::string to_string() const;
  bool operator==(const Cidr&) const = default;
};

// A secret the relay adds to requests (issue 16: docs/policy.md "HTTPS rules"). The sandbox only ever holds a
// placeholder for it (oishell-cred-NAME-<random>, made per sandbox) in the variable `env`; the relay puts the secret
// in `header` of a request its rule allows, and refuses a request that carries a placeholder anywhere else. The
// secret itself comes from outside the sandbox, never from the policy text: the supervisor's environment variable
// `from_env`, or the file `from_file` (which the sandbox may not see).
struct HttpCredential {
  std::string name;                     // [a-z0-9][a-z0-9_-]*, unique in a policy: in placeholders and messages
  std::string env;                      // the variable inside that holds the placeholder ("GITHUB_TOKEN")
  std::string header = "Authorization";
  std::string scheme;                   // "Bearer", "token": the value is "<scheme> <secret>"; "": the secret alone
  std::string from_env;                 // one of these two
  std::string from_file;                // absolute, expanded, when compiled
  bool operator==(const HttpCredential&) const = default;
};

// One allow/deny entry: "example.com", "*.example.org:443", "api.example.net:80,443" is NOT a form;
// ports come as a list only in the object form {host:, ports:}. IP literals and CIDRs are their own kinds and
// only ever match destinations written as IP literals.
struct HostRule {
  enum class Kind { exact, suffix, ip_cidr };
  // Allow rules: which transport the rule grants. A tcp rule never allows a datagram and a udp rule never a
  // stream. Deny rules are always tcp here and refuse every protocol.
  enum class Protocol { tcp, udp };
  Kind kind = Kind::exact;
  std::string host;            // normalised; for suffix the part after "*." (e.g. "example.org")
  std::optional<Cidr> cidr;    // for ip_cidr
  std::vector<uint16_t> ports; // empty = any port
  std::string text;            // as the user wrote it, for messages ("*.example.org:443")
  // Allow rules: connections to this destination keep the relay's byte path, where the first bytes are checked
  // (TLS SNI or HTTP Host must name the host); false: a brokered connect goes kernel to kernel, uninspected.
  bool inspect = true;
  // udp: datagrams through the supervisor's datagram relay (runtime/relay/datagram_relay.h), from connected
  // sockets only; such a rule lists its ports and has no `inspect`.
  Protocol protocol = Protocol::tcp;
  // Allow rules, tcp, by name: `terminate` makes the relay the TLS server the sandbox talks to (a certificate of
  // the sandbox's own authority) and a TLS client of the real host, so that it reads each HTTP request and can
  // decide it by `methods` and `paths` and add `credentials`. `passthrough` (the default) never decrypts.
  enum class Tls { passthrough, terminate };
  Tls tls = Tls::passthrough;
  std::vector<std::string> methods;           // upper-case; empty = every method (terminate only)
  std::vector<std::string> paths;             // globs on the decoded path; empty = every path (terminate only)
  std::vector<HttpCredential> credentials;    // terminate only
  std::string upstream_ca;                    // a PEM file outside: the only trust for the upstream (terminate only)

  // Parses "example.com", "Example.COM.", "*.example.org:443", "10.0.0.0/8", "[::1]:8080", "192.0.2.1".
  // Rejects "*", "*.com"-style patterns that cover a whole public suffix (one label after "*."), empty labels,
  // characters outside [a-z0-9-_.], and ports outside 1..65535, with a message saying why.
  static Result<HostRule> parse(std::string_view text);
  // With an explicit port list (object form).
  static Result<HostRule> parse(std::string_view host, std::vector<uint16_t> ports);
  bool matches(std::string_view normalised_host, uint16_t port) const;
  bool operator==(const HostRule&) const = default;
};

// Lower-case, strip one trailing dot, strip [] around IPv6 literals. Empty optional when not a valid host name
// or IP literal.
std::optional<std::string> normalise_host(std::string_view host);

struct NetworkSpec;  // policy/sandbox_spec.h

struct NetDecision {
  enum class Verdict { allow, deny, ask };
  Verdict verdict = Verdict::deny;
  std::string rule;    // which rule decided: "deny *.internal.example.org", "allow example.com", "on_unlisted: deny"
  bool inspect = true; // allow: the deciding rule's `inspect` (allow_all and ask answers inspect)
};

// "passthrough", "terminate".
std::string_view tls_name(HostRule::Tls tls);

// "tcp", "udp".
std::string_view protocol_name(HostRule::Protocol protocol);

// deny rules, then allow rules (allow_all counts as a match), else on_unlisted. `host` must be normalised.
// When several allow rules match, one with `inspect: false` decides (each rule is a grant; the uninspected one is
// the larger), else the first match. The network mode is not considered here (mode none has no relay at all).
// Only allow rules of `protocol` count. For udp, allow_all does not count and on_unlisted `ask` denies: a datagram
// destination is allowed only by a udp rule naming its host and port (there is no connection to hold for a
// question). Deny rules refuse every protocol.
NetDecision decide(const NetworkSpec& spec, std::string_view host, uint16_t port,
                   HostRule::Protocol protocol = HostRule::Protocol::tcp);

// Whether the DNS stub may look `host` up (a name has no port): deny when a deny rule without ports matches it,
// allow when an allow rule of either protocol matches it at any port (or allow_all), else on_unlisted. `host` must
// be normalised.
NetDecision decide_name(const NetworkSpec& spec, std::string_view host);

// RFC 6761 6.3: "localhost" and the names under it are the loopback, whatever /etc/hosts or a name server says (a
// root file system may have no /etc/hosts, and c-ares before 1.23 then asks the name server). The relay's resolver
// answers them with 127.0.0.1 and ::1 (the guard still decides); the DNS stub with the sandbox's own loopback.
// `name` must be normalised.
bool is_localhost_name(std::string_view name);
// What a localhost name stands for: 127.0.0.1, then ::1.
const std::vector<IpAddress>& localhost_addresses();

// The private-address guard on a resolved (or literal) destination: a private/special address, or one of
// spec.host_addresses (the relay's machine), is refused unless a CIDR in spec.allow_private contains it; a cloud
// metadata endpoint only when the CIDR names it exactly (/32, /128). Returns an empty string when allowed, else the
// reason. Pure: the machine's addresses come in through the spec.
std::string check_resolved_address(const NetworkSpec& spec, const IpAddress& address);

// The guard applied before a question is asked: when `host` is an address (or a name pinned in spec.hosts to one),
// its destination is already known, and a refusal is given at once rather than after the user allowed it, which
// would teach the user that answering "allow" does nothing (or, worse, that it was safe). Empty when the host is a
// name whose addresses are not known yet, or when the guard lets its address through. `host` must be normalised.
std::string check_known_destination(const NetworkSpec& spec, const std::string& host);

}  // namespace oishell
