#pragma once
// The cgroups of a sandbox outlive a supervisor that is SIGKILLed (nothing in it runs to remove them). The janitor
// is a small process beside the supervisor, outside the sandbox, that waits: told "done" it just exits; if instead
// the supervisor disappears, it waits for sandbox init to die (init has PDEATHSIG) and removes the cgroups.
//
// It is cloned with CLONE_VM: it shares the supervisor's address space (which outlives the supervisor for as long
// as the janitor runs) instead of copying it, so starting it costs what starting a thread does and leaves no page
// copy-on-write behind (a fork() here cost ~2.7 ms of `oishell run`). Sharing the address space, it runs on a
// stack of its own, reads only a block of its own that nobody writes after the clone, and makes raw system calls
// only (runtime/sys/raw_syscall.h): no libc, no errno, no allocation.
#include <sys/types.h>

#include <cstddef>

#include "base/status.h"
#include "base/unique_fd.h"
#include "runtime/limits.h"

namespace oishell {

class CgroupJanitor {
 public:
  // Only when `limits` made cgroups (otherwise there is nothing to leave behind and no process is started).
  // Must be called while `init_pidfd` refers to sandbox init.
  [[nodiscard]] Status start(int init_pidfd, const ResourceLimits& limits);
  // The supervisor has torn everything down itself: the janitor exits (reaped now if already gone, else by a
  // later release()). Idempotent.
  void release();
  ~CgroupJanitor() { release(); }

 private:
  pid_t pid_ = -1;
  void* block_ = nullptr;  // the janitor's own mapping: its arguments and its stack
  size_t block_bytes_ = 0;
  UniqueFd done_;  // write end; closing it without writing means "the supervisor died"
};

}  // namespace oishell
