#pragma once
// The one place an SCM_RIGHTS message is built: bytes with descriptors attached, over a unix socket. The supervisor's
// message protocol (runtime/fd_passing.h), its word to the cgroup janitor (runtime/outside/cgroup_janitor.cc) and a
// forked child handing back a socket it made in the sandbox's namespaces (runtime/broker/sandbox_unix_sockets.cc)
// all send through it.
#include <sys/types.h>

#include <cstddef>

namespace oishell {

// The most descriptors one send_with_fds() call attaches (the kernel takes up to SCM_MAX_FD, 253).
inline constexpr size_t kMaxAttachedFds = 193;

// Sends `size` bytes at `bytes` with the `count` descriptors at `fds` attached (0: none). Retries EINTR, never
// raises SIGPIPE. Allocates nothing and calls only sendmsg(2): async-signal-safe, so a forked child of a threaded
// process may call it. Returns what sendmsg returns: the bytes sent, or -1 with errno (EINVAL: more than
// kMaxAttachedFds descriptors).
ssize_t send_with_fds(int socket, const void* bytes, size_t size, const int* fds, size_t count);

}  // namespace oishell
