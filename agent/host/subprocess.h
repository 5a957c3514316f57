#pragma once
// Starting helper processes without a shell: the supervisor (pipes for stdin/stdout/stderr, its own process group,
// dies with the agent), a capture of a short command's output, and an interactive program ($EDITOR).
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::agent {

// Whether an executable `name` is in one of $PATH's directories (/usr/bin:/bin without PATH).
bool program_on_path(const std::string& name);

struct PipedChild {
  pid_t pid = -1;
  UniqueFd stdin_fd, stdout_fd, stderr_fd;  // the parent's ends (stdout/stderr non-blocking)
};

// argv[0] is looked up in PATH when it has no '/'. `env` entries are "KEY=value".
Result<PipedChild> spawn_piped(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                               bool new_process_group);

// Writes all of `data` to a child's pipe. A child that is gone is an error (EPIPE, with the call), never the
// SIGPIPE that would end the agent: the signal is held for the write and a pending one taken back.
Status write_to_child(int fd, std::string_view data);

struct Captured {
  int exit_code = -1;   // 128+N for signal N
  std::string output;   // stdout
};
// Runs argv with stdin /dev/null, stderr discarded; kills it after timeout_ms.
Result<Captured> run_capture(const std::vector<std::string>& argv, int timeout_ms);

// Starts argv detached (a session of its own, stdio on /dev/null, not killed when the agent goes: a browser it
// becomes outlives the agent) and returns once it has exec-ed; the error when exec failed.
Status spawn_detached(const std::vector<std::string>& argv);

// Runs argv with the terminal (stdio inherited) and waits; the exit status (128+N for a signal).
Result<int> run_interactive(const std::vector<std::string>& argv);

}  // namespace oishell::agent
