// The connect broker's unix path: a pathname socket is resolved as the caller sees it (inside its root, magic
// links refused, with the sandbox's ids and no capabilities: as_sandbox.h), opened O_PATH once, and allowed by its inode: on the sandbox's own tmpfs, bound by a socket of the
// sandbox's network namespace (sock_diag), or listed in `network.unix`. The caller's own socket is then connected
// to that inode through /proc/self/fd/N, so a path swapped after the check changes nothing. Abstract names belong
// to the network namespace and are connected as they are.
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>

#include "runtime/broker/broker.h"
#include "runtime/broker/broker_request.h"
#include "runtime/relay/audit.h"
#include "runtime/sys/syscalls.h"

namespace oishell::broker {

std::vector<dev_t> detail::own_tmpfs_devices(int root_fd, const std::vector<std::string>& paths) {
  std::vector<dev_t> devs;
  for (const auto& path : paths) {
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;
    UniqueFd fd(sys::openat2(root_fd, path.c_str(), &how));
    struct stat st {};
    if (fd && ::fstat(fd.get(), &st) == 0) devs.push_back(st.st_dev);
  }
  return devs;
}

bool Broker::own_tmpfs(dev_t dev) const {
  return std::find(own_tmpfs_devs_.begin(), own_tmpfs_devs_.end(), dev) != own_tmpfs_devs_.end();
}

SandboxUnixSockets* Broker::sandbox_sockets() {
  if (!sandbox_sockets_ && !sandbox_sockets_failed_) {
    auto opened = SandboxUnixSockets::open(ctx_.userns_fd, ctx_.netns_fd);
    if (opened) {
      sandbox_sockets_.emplace(std::move(*opened));
    } else {
      sandbox_sockets_failed_ = true;  // every such socket is then refused unless listed: fail closed
      relay::emit_error(*ctx_.events, "", 0, "broker: " + opened.status().message());
    }
  }
  return sandbox_sockets_ ? &*sandbox_sockets_ : nullptr;
}

bool Broker::bound_inside(const struct stat& st) {
  SandboxUnixSockets* sockets = sandbox_sockets();
  if (!sockets) return false;
  auto bound = sockets->bound_here(st.st_dev, st.st_ino);
  return bound.is_ok() && *bound;
}

void Broker::start_unix(Request& r) {
  const auto* sun = reinterpret_cast<const sockaddr_un*>(&r.addr);
  if (r.addr.ss_family != AF_UNIX || r.fast_open) {
    respond(r, 0, r.fast_open ? EOPNOTSUPP : EINVAL);
    return;
  }
  size_t path_len = r.addrlen - offsetof(sockaddr_un, sun_path);
  if (path_len == 0 || sun->sun_path[0] == '\0') {
    // Abstract (or unnamed: the kernel says EINVAL): names live in the sandbox's network namespace.
    connect_callers_socket(r, reinterpret_cast<sockaddr*>(&r.addr), r.addrlen);
    return;
  }
  std::string_view path(sun->sun_path, strnlen(sun->sun_path, path_len));
  if (!ctx_.as_sandbox) {
    respond(r, 0, EACCES);  // never resolved with the supervisor's rights (supervisor.cc always gives the thread)
    return;
  }
  auto target = open_unix_target(*r.caller, path, *ctx_.as_sandbox);
  if (!target) {
    respond(r, 0, target.status().errno_value() ? target.status().errno_value() : ECONNREFUSED);
    return;
  }
  if (!S_ISSOCK(target->st.st_mode)) {
    respond(r, 0, ECONNREFUSED);  // what connect(2) answers for a path that is not a socket
    return;
  }
  InodeId inode{target->st.st_dev, target->st.st_ino};
  auto allowed = allowed_unix_inodes(ctx_.spec->unix_sockets);
  bool listed = std::find(allowed.begin(), allowed.end(), inode) != allowed.end();
  if (!listed && !own_tmpfs(inode.dev) && !bound_inside(target->st)) {
    deny(r, "unix", target->where, 0, "a socket outside the sandbox's own files that network.unix does not list",
         "network.unix", EACCES);
    return;
  }
  if (listed) relay::emit_allowed(*ctx_.events, "unix", target->where, 0, "network.unix", target->where);
  // The inode checked, through this process's fd of it: no second lookup of the caller's path.
  sockaddr_un via{};
  via.sun_family = AF_UNIX;
  std::string fd_path = "/proc/self/fd/" + std::to_string(target->path.get());
  std::memcpy(via.sun_path, fd_path.c_str(), fd_path.size() + 1);
  r.retry_until = Clock::now() + std::chrono::milliseconds(ctx_.connect_timeout_ms);
  r.addr = {};
  std::memcpy(&r.addr, &via, sizeof via);
  r.addrlen = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + fd_path.size() + 1);
  // Keep the O_PATH fd alive for retries: the path names it.
  r.own = std::move(target->path);
  connect_callers_socket(r, reinterpret_cast<sockaddr*>(&r.addr), r.addrlen);
}

}  // namespace oishell::broker
