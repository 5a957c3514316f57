#pragma once
// Sandbox init seen from the supervisor before the sandbox is built: cloned into new user, mount, pid, net, ipc and
// uts namespaces, it maps its ids and waits for the compiled policy (the `spec` message). Nothing in it depends on
// the policy, so `oishell run` clones it before compiling the policy and both proceed at once; a clone made this
// early also copies a small address space.
#include <sys/types.h>

#include "base/status.h"
#include "base/unique_fd.h"
#include "runtime/outside/cgroup_birth.h"

namespace oishell {

class InitProcess {
 public:
  // Preconditions as for Sandbox::create: the calling thread outlives the sandbox (init's PDEATHSIG follows it),
  // and no other thread may be inside malloc (init is a raw clone3 of this process).
  // Where cgroup v2 allows it, init is born in its cgroup (runtime/outside/cgroup_birth.h); else it is cloned and
  // the supervisor moves it later, and start_note() says why.
  static Result<InitProcess> clone();
  // The same with the cgroups given (tests: OwnCgroups::parse of a fake tree, or a tree without v2).
  static Result<InitProcess> clone(const cgroup::OwnCgroups& own);

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

  // Whether init was cloned straight into its cgroup (clone3 CLONE_INTO_CGROUP), and which.
  bool born_in_cgroup() const { return born_; }
  const std::string& cgroup_dir() const { return birth_.group.path(); }
  // init_start_note(): how init started, and why not born in its cgroup when it was not.
  std::string start_note() const { return init_start_note(born_, birth_.group.path(), birth_.why_not); }

  // The supervisor takes over: it kills and reaps init from now on, and owns its group and the group's janitor.
  void release(pid_t* pid, UniqueFd* pidfd, UniqueFd* control, UniqueFd* userns, BirthCgroup* birth);

 private:
  void kill_and_reap();

  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd control_;  // SOCK_SEQPACKET, the supervisor's end
  UniqueFd userns_;   // root callers only
  // Destroyed after kill_and_reap(): the group (emptied by init's death) is removed, then its janitor released.
  BirthCgroup birth_;
  bool born_ = false;
};

}  // namespace oishell
