// The machine's own addresses for the relay's guard: see host_addresses.h.
#include "runtime/relay/host_addresses.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace oishell::relay {

Result<std::vector<IpAddress>> machine_addresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return Status::from_errno(errno, "getifaddrs");
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owned(list, &::freeifaddrs);
  std::vector<IpAddress> out;
  for (const ifaddrs* ifa = list; ifa; ifa = ifa->ifa_next) {
    if (!ifa->ifa_addr) continue;
    IpAddress a;
    if (ifa->ifa_addr->sa_family == AF_INET) {
      a.family = IpAddress::Family::v4;
      std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in*>(ifa->ifa_addr)->sin_addr, 4);
    } else if (ifa->ifa_addr->sa_family == AF_INET6) {
      a.family = IpAddress::Family::v6;
      std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in6*>(ifa->ifa_addr)->sin6_addr, 16);
    } else {
      continue;  // AF_PACKET entries carry link-layer addresses
    }
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  return out;
}

Status add_host_addresses(NetworkSpec& spec) {
  auto addresses = machine_addresses();
  if (!addresses) return addresses.status().with_context("the machine's own addresses for the private-address guard");
  for (const IpAddress& a : *addresses) {
    auto& known = spec.host_addresses;
    if (std::find(known.begin(), known.end(), a) == known.end()) known.push_back(a);
  }
  return Status::ok();
}

}  // namespace oishell::relay
