#pragma once
// Sandbox init: pid 1 of the sandbox. It seals itself in the order of DESIGN.md ("Sealing order"), reporting the
// first failure to the supervisor with the step's name, then serves spawn requests (runtime/init_loop.h).
#include "policy/sandbox_spec.h"
#include "runtime/limits.h"

namespace oishell {

struct InitArgs {
  const SandboxSpec* spec = nullptr;
  const ResourceLimits* limits = nullptr;  // the supervisor's object, as copied into this process by clone
  int control_fd = -1;                     // SOCK_SEQPACKET to the supervisor
};

// Runs in the child of clone(NEWUSER|NEWNS|NEWPID|NEWNET|NEWIPC|NEWUTS). Must be single-threaded (it is: the
// supervisor starts no thread before clone). Never returns.
[[noreturn]] void run_sandbox_init(const InitArgs& args);

}  // namespace oishell
