#pragma once
// Which pathname unix sockets the sandbox bound itself: a socket file belongs to the sandbox when its listener
// lives in the sandbox's network namespace, which sock_diag (NETLINK_SOCK_DIAG, UDIAG_SHOW_VFS) answers by the
// file's inode. A host service's socket in the workspace lives in the host's namespace and is not listed.
#include <sys/types.h>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::broker {

class SandboxUnixSockets {
 public:
  // A sock_diag socket in the sandbox's network namespace: made by a short-lived child that joins the sandbox's
  // user namespace (the supervisor owns it) and then its network namespace (fds from sandbox init).
  static Result<SandboxUnixSockets> open(int userns_fd, int netns_fd);
  // Whether a unix socket of the sandbox's namespace is bound to the file (dev, ino).
  Result<bool> bound_here(dev_t dev, ino_t ino) const;
  // The sock_diag socket itself, for other queries of the same namespace (sandbox_udp_sockets.h).
  int diag_fd() const { return diag_.get(); }

 private:
  explicit SandboxUnixSockets(UniqueFd diag) : diag_(std::move(diag)) {}
  UniqueFd diag_;
};

}  // namespace oishell::broker
