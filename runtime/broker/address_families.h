#pragma once
// Which connects the broker may make at all, by the socket's family and the sockaddr's: a pure decision, before
// any other (broker_decisions.cc). The broker connects with more rights than the caller has (the supervisor owns the
// sandbox's user namespace, so the kernel's own checks of capabilities in that namespace pass for it), so every
// check the kernel would make against an unprivileged caller that those rights would skip is made here, and a
// family the broker has no rule for is never connected: fail closed.
#include <sys/socket.h>

namespace oishell::broker {

// 0 when the connect of a socket of `domain` to `addr` (`len` bytes, at least its family) may go on to the
// broker's rules for that family; else the errno to answer with:
//   EAFNOSUPPORT  a socket, or a sockaddr, of any family but AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK (AF_UNSPEC
//                 is allowed as a sockaddr: it disconnects)
//   EINVAL        a netlink socket given another family's sockaddr, or a short one (netlink_connect's answer)
//   EPERM         a netlink sockaddr naming multicast groups or a port id other than the kernel's (0): sending to
//                 them needs CAP_NET_ADMIN in the namespace, which nothing inside has (netlink_connect's answer
//                 for an unprivileged caller; the supervisor would pass that check: a forged rtnetlink message)
[[nodiscard]] int refused_address(int domain, const sockaddr_storage& addr, socklen_t len);

}  // namespace oishell::broker
