#include "runtime/broker/sandbox_unix_sockets.h"

#include "base/scm_rights.h"
#include "runtime/broker/sock_diag_dump.h"

#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace oishell::broker {
namespace {

// In the forked child: only async-signal-safe calls, no allocation.
[[noreturn]] void make_socket_in(int userns, int netns, int reply) {
  int fd = -1;
  if (::setns(userns, CLONE_NEWUSER) == 0 && ::setns(netns, CLONE_NEWNET) == 0) {
    fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  }
  int err = fd < 0 ? errno : 0;
  _exit(send_with_fds(reply, &err, sizeof err, &fd, fd >= 0 ? 1 : 0) < 0 ? 1 : 0);
}

}  // namespace

Result<SandboxUnixSockets> SandboxUnixSockets::open(int userns, int netns) {
  if (userns < 0 || netns < 0) return Status::error("sock_diag: no namespace fds");
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) return Status::from_errno(errno, "socketpair");
  UniqueFd ours(pair[0]);
  UniqueFd theirs(pair[1]);
  pid_t child = ::fork();
  if (child < 0) return Status::from_errno(errno, "fork");
  if (child == 0) make_socket_in(userns, netns, theirs.get());
  theirs.reset();
  int err = 0;
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&err, sizeof err};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = ::recvmsg(ours.get(), &msg, MSG_CMSG_CLOEXEC);
  int recv_errno = errno;
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (n != sizeof err) return Status::from_errno(n < 0 ? recv_errno : EPROTO, "recvmsg(sock_diag socket)");
  if (err != 0) return Status::from_errno(err, "joining the sandbox's namespaces for sock_diag");
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_type != SCM_RIGHTS) return Status::error("sock_diag socket: no fd received");
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return SandboxUnixSockets(UniqueFd(fd));
}

Result<bool> SandboxUnixSockets::bound_here(dev_t dev, ino_t ino) const {
  struct {
    nlmsghdr nlh;
    unix_diag_req req;
  } request{};
  request.nlh.nlmsg_len = sizeof request;
  request.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.req.sdiag_family = AF_UNIX;
  request.req.udiag_states = ~0u;
  request.req.udiag_show = UDIAG_SHOW_VFS;
  bool found = false;
  OI_TRY(sock_diag_dump(diag_.get(), &request, sizeof request, "unix", [&](const nlmsghdr& h) {
    if (h.nlmsg_len < NLMSG_LENGTH(sizeof(unix_diag_msg))) return;
    const auto* msg = static_cast<const unix_diag_msg*>(NLMSG_DATA(&h));
    size_t attr_left = h.nlmsg_len - NLMSG_LENGTH(sizeof *msg);
    for (auto* a = reinterpret_cast<const nlattr*>(msg + 1);
         attr_left >= sizeof(nlattr) && a->nla_len >= sizeof(nlattr) && a->nla_len <= attr_left;) {
      if (a->nla_type == UNIX_DIAG_VFS && a->nla_len >= NLA_HDRLEN + sizeof(unix_diag_vfs)) {
        unix_diag_vfs vfs;
        std::memcpy(&vfs, reinterpret_cast<const char*>(a) + NLA_HDRLEN, sizeof vfs);
        // The kernel's own dev_t (major << 20 | minor), not stat(2)'s encoding.
        dev_t vfs_dev = makedev(vfs.udiag_vfs_dev >> 20, vfs.udiag_vfs_dev & 0xfffff);
        if (vfs.udiag_vfs_ino == ino && vfs_dev == dev) found = true;
      }
      size_t step = NLA_ALIGN(a->nla_len);
      if (step > attr_left) break;
      attr_left -= step;
      a = reinterpret_cast<const nlattr*>(reinterpret_cast<const char*>(a) + step);
    }
  }));
  return found;
}

}  // namespace oishell::broker
