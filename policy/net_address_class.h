#pragma once
// Helpers behind IpAddress/Cidr shared by policy/net_rules.cc and the relay. Pure functions.
#include <optional>
#include <string_view>

#include "policy/net_rules.h"

namespace oishell {

// Which special-purpose range `address` is in ("loopback", "private (RFC 1918)", "unique local (fc00::/7)", ...),
// or empty when it is an ordinary public address.
std::string_view special_address_class(const IpAddress& address);

// Which well-known cloud metadata or platform endpoint `address` is ("a cloud metadata endpoint (Alibaba Cloud)"),
// also in an IPv6 form that carries it (mapped, NAT64, ...), or empty. special_address_class() names these too.
std::string_view metadata_endpoint(const IpAddress& address);

// Strict dotted-quad IPv4 ("127.0.0.1"; not "127.1", "0x7f.0.0.1" or "2130706433").
std::optional<IpAddress> parse_ipv4_dotted(std::string_view text);

// The IPv4 address of an IPv4-mapped IPv6 address (::ffff:a.b.c.d), else empty.
std::optional<IpAddress> unmap_v4(const IpAddress& address);

}  // namespace oishell
