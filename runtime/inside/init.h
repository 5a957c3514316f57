#pragma once
// Sandbox init: pid 1 of the sandbox. It maps its ids, receives the compiled policy (`spec`), seals itself in the
// order of DESIGN.md ("Sealing order"), reporting the first failure to the supervisor with the step's name, then
// serves spawn requests (runtime/inside/init_loop.h).
#include <sched.h>
#include <sys/types.h>

namespace oishell {

struct InitArgs {
  int control_fd = -1;  // SOCK_SEQPACKET to the supervisor
  uid_t uid = 0;        // the supervisor's euid and egid, mapped to themselves inside
  gid_t gid = 0;
  // A root caller: the supervisor writes init's maps (0 inside, an unused id outside: runtime/inside/userns.h) before
  // it sends `spec`, and the binds of the policy arrive with `spec`, the writable ones id-mapped
  // (runtime/outside/idmapped_binds.h).
  bool root_caller = false;
  // The caller's CPU set: InitProcess runs init beside the supervisor during the set-up, and init takes this set
  // back before it starts anything, so that the sandbox's processes get every CPU the caller had.
  cpu_set_t cpus{};
  bool restore_cpus = false;
};

// Runs in the child of clone(NEWUSER|NEWNS|NEWPID) (runtime/outside/init_process.h) and unshares net, ipc and uts itself.
// Must be single-threaded (it is: the supervisor starts no thread before clone). Never returns.
[[noreturn]] void run_sandbox_init(const InitArgs& args);

}  // namespace oishell
