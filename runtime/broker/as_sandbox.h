#pragma once
// A thread of the supervisor's that holds the sandbox's own credentials: the uid, gid and groups its processes have
// on the host, and no capabilities. The broker resolves a unix socket's path and connects to it on this thread, so
// that the kernel checks them as it would the sandbox's own connect: search permission along the path (a directory
// the sandbox cannot search answers EACCES, never whether a name exists beneath it), write permission on the
// socket, and SO_PEERCRED (a server sees the sandbox's uid, never the supervisor's: root for a root caller).
//
// Why a thread with credentials of its own, and not a process in the sandbox's user namespace: the kernel keeps
// credentials per thread, so one thread can drop to the sandbox's ids for good (real, effective and saved, so
// there is no way back, and every capability set cleared) while the rest of the supervisor keeps its own, with
// the fds, the pidfds and the caller's root directory shared: nothing to pass over a socket, no process to reap.
// setns(2) into the sandbox's user namespace is not open to a thread of a multi-threaded process, and a process
// there would hold the capabilities of that namespace, which the sandbox's processes do not (every set is empty
// inside). libc's set*id calls change every thread (glibc's setxid broadcast): the raw system calls are used
// (runtime/sys/thread_credentials.h), and nothing else in the supervisor changes ids.
//
// The kernel's answer to an euid change: the process becomes non-dumpable (commit_creds). That is kept: the thread
// now shares a uid with the sandbox's processes, and non-dumpable keeps them from ptrace access to it should they
// ever name it (they cannot: it is outside their pid namespace).
#include <sys/socket.h>
#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"

namespace oishell::broker {

// The sandbox's processes' credentials on the host.
struct SandboxIds {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary
};

// Read from the sandbox's init (/proc/PID/status: its effective ids and groups, as this process's user namespace
// names them) once init reported ready, after which its credentials are those of every process inside: an
// ordinary caller's own uid, gid and groups (setgroups is denied inside); for a root caller the unused id and no
// groups (runtime/inside/userns.h).
[[nodiscard]] Result<SandboxIds> sandbox_ids_of(pid_t init_pid);

class AsSandbox {
 public:
  // Starts the thread and takes `ids` there (groups, gid, uid, then every capability set cleared), read back;
  // an error when any step fails.
  [[nodiscard]] static Result<std::unique_ptr<AsSandbox>> start(const SandboxIds& ids);
  ~AsSandbox();
  AsSandbox(const AsSandbox&) = delete;
  AsSandbox& operator=(const AsSandbox&) = delete;

  // Runs `work` on the thread and returns once it has run. One caller at a time (the broker's loop thread).
  void run(const std::function<void()>& work);
  // connect(2) of `fd` (any fd of this process) on the thread: 0 or the errno.
  int connect(int fd, const sockaddr* addr, socklen_t len);

 private:
  AsSandbox() = default;
  void serve(const SandboxIds& ids);

  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void()>* work_ = nullptr;  // with mu_
  bool done_ = false;                            // with mu_
  bool stop_ = false;                            // with mu_
  bool ready_ = false;                           // with mu_
  Status started_;                               // with mu_, once ready_
  std::thread thread_;
};

}  // namespace oishell::broker
