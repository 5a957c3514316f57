#include "runtime/broker/sock_diag_dump.h"

#include <sys/socket.h>

#include <cerrno>
#include <string>

namespace oishell::broker {

Status sock_diag_dump(int diag_fd, const void* request, size_t size, const char* what,
                      const std::function<void(const nlmsghdr&)>& each) {
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(diag_fd, request, size, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    return Status::from_errno(errno, std::string("sendto(sock_diag, ") + what + ")");
  }
  alignas(nlmsghdr) char buf[32 * 1024];
  while (true) {
    ssize_t n = ::recv(diag_fd, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::from_errno(errno, std::string("recv(sock_diag, ") + what + ")");
    }
    size_t left = static_cast<size_t>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_type == NLMSG_DONE) return Status::ok();
      if (h->nlmsg_type == NLMSG_ERROR) {
        const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
        return Status::from_errno(-e->error, std::string("sock_diag (") + what + ")");
      }
      each(*h);
    }
  }
}

}  // namespace oishell::broker
