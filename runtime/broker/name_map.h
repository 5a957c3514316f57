#pragma once
// NameMap: the sandbox's synthetic ("mapped") addresses. The DNS stub never answers a real address: an allowed (or
// asked-about) name gets an address of this map, and the broker maps the address a connect(2) names back to the
// name and decides that connection by name, like an HTTP CONNECT. Per sandbox; thread-safe (one mutex).
//
// IPv4: 198.18.0.0/15 (RFC 2544 benchmarking), never a real destination (the private-address guard refuses it).
// IPv6: fd6f:6973:6865:6c6c::/64 (a ULA prefix whose bytes spell "oishell"; also refused by the guard); the
// interface id carries the IPv4 address of the same name: fd6f:6973:6865:6c6c::c612:1 is 198.18.0.1's twin.
// Each new name takes the next index (198.18.0.1, 198.18.0.2, ...): a name keeps its addresses for the map's
// lifetime, and the pool is bounded (kPoolSize names), which also bounds the map's memory.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "policy/net_rules.h"

namespace oishell::broker {

class NameMap {
 public:
  // 198.18.0.1 .. 198.19.255.254: the /15 without its first and last address.
  static constexpr uint32_t kPoolSize = (uint32_t{1} << 17) - 2;

  // `capacity`: how many names the map holds at most (kPoolSize; less for tests).
  explicit NameMap(uint32_t capacity = kPoolSize);
  NameMap(const NameMap&) = delete;
  NameMap& operator=(const NameMap&) = delete;

  // The synthetic address of `normalised_name` (normalise_host() output) in `family`: the same for every call with
  // that name. Empty when the name is new and the pool is exhausted (nothing is evicted).
  std::optional<IpAddress> address_for(const std::string& normalised_name, IpAddress::Family family);
  // The name a synthetic address was given for; an IPv4-mapped IPv6 address (::ffff:198.18.x.y) is read as its
  // IPv4 form. Empty for an address the map never gave out (synthetic-looking or not).
  std::optional<std::string> name_of(const IpAddress& address) const;
  // Whether `address` lies in the synthetic ranges (198.18.0.0/15, its IPv4-mapped form, the ULA /64), given out
  // or not. A connect to such an address is never a real destination.
  static bool is_synthetic(const IpAddress& address);
  // How many names have an address.
  size_t size() const;

 private:
  static std::optional<uint32_t> index_of(const IpAddress& address);

  const uint32_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, uint32_t> index_;  // name -> index (0-based)
  std::vector<std::string> names_;                   // index -> name
};

}  // namespace oishell::broker
