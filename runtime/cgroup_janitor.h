#pragma once
// The cgroups of a sandbox outlive a supervisor that is SIGKILLed (nothing in it runs to remove them). The janitor
// is a small child of the supervisor, outside the sandbox, that waits: told "done" it just exits; if instead the
// supervisor disappears, it waits for sandbox init to die (init has PDEATHSIG) and tears the cgroups down.
#include <sys/types.h>

#include "base/status.h"
#include "base/unique_fd.h"
#include "runtime/limits.h"

namespace oishell {

class CgroupJanitor {
 public:
  // Only when `limits` uses a cgroup (otherwise there is nothing to leave behind and no process is started).
  // Must be called while `init_pidfd` refers to sandbox init. Uses fork(), so it is safe in a threaded process.
  [[nodiscard]] Status start(int init_pidfd, ResourceLimits* limits);
  // The supervisor has torn everything down itself: the janitor exits (reaped now if already gone, else by a
  // later release()). Idempotent.
  void release();
  ~CgroupJanitor() { release(); }

 private:
  pid_t pid_ = -1;
  UniqueFd done_;  // write end; closing it without writing means "the supervisor died"
};

}  // namespace oishell
