#pragma once
// How sandbox init starts a process: vfork semantics (the child borrows init's memory until it execs, so no page
// table is copied), with what posix_spawn would do given init's file actions, minus the 64 rt_sigaction calls
// glibc's posix_spawn makes in every child (it cannot know which signals have handlers). Init has none: it resets
// every caught or ignored signal to its default once, when it starts (reset_signal_dispositions), and installs
// none after (it reads SIGCHLD from a signalfd), so the borrowed memory never runs a handler and every command
// starts with default dispositions, as POSIX_SPAWN_SETSIGDEF of every signal gave it.
#include <sys/types.h>

#include <vector>

#include "base/status.h"

namespace oishell {

// Every signal init catches or ignores back to SIG_DFL (read from /proc/self/status: a few calls, not 64).
Status reset_signal_dispositions();

struct SpawnPlan {
  const char* path = nullptr;  // what execve runs (already resolved against PATH)
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  // fd i of the new process is sources[i] (dup2-ed; each must be above sources.size()), or, for -1, a fresh open of
  // `terminal_path` (O_RDWR; the first one becomes the controlling terminal of the new session).
  std::vector<int> sources;
  const char* terminal_path = nullptr;
  const char* cwd = nullptr;  // nullptr: init's
  bool new_session = false;   // setsid(); otherwise a process group of its own (setpgid(0, 0))
};

// Starts the process; 0 and its pid, or the errno of the step that failed (the child's execve included). Every fd
// from sources.size() up is closed in the child, the signal mask is empty.
int spawn_process(const SpawnPlan& plan, pid_t* pid);

}  // namespace oishell
