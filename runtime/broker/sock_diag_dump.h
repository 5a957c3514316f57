#pragma once
// One NETLINK_SOCK_DIAG dump: the request sent, every answer message handed to `each` until NLMSG_DONE, an
// NLMSG_ERROR returned as its errno. The unix (sandbox_unix_sockets) and UDP (sandbox_udp_sockets) queries of the
// sandbox's namespace share it.
#include <linux/netlink.h>

#include <cstddef>
#include <functional>

#include "base/status.h"

namespace oishell::broker {

// `request`: an nlmsghdr (SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP) followed by the family's request, of
// `size` bytes. `what` names the query in errors ("udp", "unix").
Status sock_diag_dump(int diag_fd, const void* request, size_t size, const char* what,
                      const std::function<void(const nlmsghdr&)>& each);

}  // namespace oishell::broker
