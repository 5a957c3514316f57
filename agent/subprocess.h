#pragma once
// Starting helper processes without a shell: the supervisor (pipes for stdin/stdout/stderr, its own process group,
// dies with the agent), a capture of a short command's output, and an interactive program ($EDITOR).
#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::agent {

struct PipedChild {
  pid_t pid = -1;
  UniqueFd stdin_fd, stdout_fd, stderr_fd;  // the parent's ends (stdout/stderr non-blocking)
};

// argv[0] is looked up in PATH when it has no '/'. `env` entries are "KEY=value".
Result<PipedChild> spawn_piped(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                               bool new_process_group);

struct Captured {
  int exit_code = -1;   // 128+N for signal N
  std::string output;   // stdout
};
// Runs argv with stdin /dev/null, stderr discarded; kills it after timeout_ms.
Result<Captured> run_capture(const std::vector<std::string>& argv, int timeout_ms);

// Runs argv with the terminal (stdio inherited) and waits; the exit status (128+N for a signal).
Result<int> run_interactive(const std::vector<std::string>& argv);

}  // namespace oishell::agent
