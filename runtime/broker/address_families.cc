#include "runtime/broker/address_families.h"

#include <linux/netlink.h>

#include <cerrno>
#include <cstring>

namespace oishell::broker {
namespace {

bool brokered_family(int family) {
  return family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK;
}

}  // namespace

int refused_address(int domain, const sockaddr_storage& addr, socklen_t len) {
  if (!brokered_family(domain)) return EAFNOSUPPORT;
  if (addr.ss_family == AF_UNSPEC) return 0;  // a disconnect (broker_decisions.cc)
  if (!brokered_family(addr.ss_family)) return EAFNOSUPPORT;
  if (domain != AF_NETLINK) return 0;
  if (addr.ss_family != AF_NETLINK || len < sizeof(sockaddr_nl)) return EINVAL;
  sockaddr_nl nl{};
  std::memcpy(&nl, &addr, sizeof nl);
  // The kernel's own rule (netlink_connect): groups or a port id need NL_CFG_F_NONROOT_SEND or CAP_NET_ADMIN.
  // NETLINK_ROUTE, the one protocol the `sockets` set lets the sandbox make, has no NONROOT_SEND; the others that
  // do (a policy without that set) are refused too, since the broker cannot tell them apart without trusting more.
  if (nl.nl_groups != 0 || nl.nl_pid != 0) return EPERM;
  return 0;
}

}  // namespace oishell::broker
