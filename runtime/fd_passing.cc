#include "runtime/fd_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

namespace oishell {

Status send_message(int socket, const std::string& payload, const std::vector<int>& fds) {
  if (payload.size() > kMaxMessageBytes) {
    return Status::error("message of " + std::to_string(payload.size()) + " bytes exceeds the limit of " +
                         std::to_string(kMaxMessageBytes));
  }
  if (fds.size() > kMaxPassedFds) return Status::error("too many fds to pass: " + std::to_string(fds.size()));
  iovec iov{const_cast<char*>(payload.data()), payload.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (n >= 0) return Status::ok();
    if (errno != EINTR) return Status::from_errno(errno, "sendmsg");
  }
}

Result<Message> receive_message(int socket) {
  // The packet's length first (MSG_PEEK | MSG_TRUNC, no descriptor taken: there is no room for any), then the
  // packet into a payload of that size. A buffer of the largest size instead costs a 192 KiB allocation per
  // thread, which in a new process (sandbox init) took 0.2 ms, more than the extra call.
  ssize_t length;
  do {
    length = ::recv(socket, nullptr, 0, MSG_PEEK | MSG_TRUNC);
  } while (length < 0 && errno == EINTR);
  if (length < 0) return Status::from_errno(errno, "recv(MSG_PEEK)");
  Message out;
  out.payload.resize(std::min(static_cast<size_t>(length), kMaxMessageBytes));
  iovec iov{out.payload.data(), out.payload.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::from_errno(errno, "recvmsg");
  out.payload.resize(static_cast<size_t>(n));
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof fd);
      out.fds.emplace_back(fd);
    }
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) return Status::error("recvmsg: message truncated");
  return out;
}

}  // namespace oishell
