#pragma once
// Sandbox init seen from the supervisor before the sandbox is built: cloned into new user, mount, pid, net, ipc and
// uts namespaces, it maps its ids and waits for the compiled policy (the `spec` message). Nothing in it depends on
// the policy, so `oishell run` clones it before compiling the policy and both proceed at once; a clone made this
// early also copies a small address space.
#include <sys/types.h>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell {

class InitProcess {
 public:
  // Preconditions as for Sandbox::create: the calling thread outlives the sandbox (init's PDEATHSIG follows it),
  // and no other thread may be inside malloc (init is a raw clone3 of this process).
  static Result<InitProcess> clone();

  InitProcess() = default;
  InitProcess(InitProcess&& other) noexcept;
  InitProcess& operator=(InitProcess&& other) noexcept;
  // An init never handed to a sandbox is killed and reaped.
  ~InitProcess();

  bool valid() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }
  int control() const { return control_.get(); }
  // A root caller's init (runtime/inside/userns.h): its user namespace, for id-mapping the policy's binds; else invalid.
  int userns() const { return userns_.get(); }

  // The supervisor takes over: it kills and reaps init from now on.
  void release(pid_t* pid, UniqueFd* pidfd, UniqueFd* control, UniqueFd* userns);

 private:
  void kill_and_reap();

  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd control_;  // SOCK_SEQPACKET, the supervisor's end
  UniqueFd userns_;   // root callers only
};

}  // namespace oishell
