#include "runtime/broker/sandbox_udp_sockets.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "runtime/broker/sock_diag_dump.h"

namespace oishell::broker {
namespace {

Status dump(int diag_fd, int family, std::vector<relay::DatagramSource>& out) {
  struct {
    nlmsghdr nlh;
    inet_diag_req_v2 req;
  } request{};
  request.nlh.nlmsg_len = sizeof request;
  request.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.req.sdiag_family = static_cast<uint8_t>(family);
  request.req.sdiag_protocol = IPPROTO_UDP;
  request.req.idiag_states = ~0u;
  return sock_diag_dump(diag_fd, &request, sizeof request, "udp", [&out](const nlmsghdr& h) {
    if (h.nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) return;
    const auto* msg = static_cast<const inet_diag_msg*>(NLMSG_DATA(&h));
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (msg->idiag_family == AF_INET) {
      auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
      sin->sin_family = AF_INET;
      sin->sin_port = msg->id.idiag_sport;
      std::memcpy(&sin->sin_addr, msg->id.idiag_src, 4);
      len = sizeof *sin;
    } else if (msg->idiag_family == AF_INET6) {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = msg->id.idiag_sport;
      std::memcpy(&sin6->sin6_addr, msg->id.idiag_src, 16);
      len = sizeof *sin6;
    } else {
      return;
    }
    out.push_back(relay::DatagramSource::from(ss, len));
  });
}

}  // namespace

Result<std::vector<relay::DatagramSource>> sandbox_udp_sockets(int diag_fd) {
  std::vector<relay::DatagramSource> out;
  OI_TRY(dump(diag_fd, AF_INET, out));
  OI_TRY(dump(diag_fd, AF_INET6, out));
  return out;
}

}  // namespace oishell::broker
