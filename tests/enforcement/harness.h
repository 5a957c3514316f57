#pragma once
// Runs `oishell run` as a user would, for enforcement tests. Each call is a fresh sandbox (one process per case).
#include <sys/types.h>

#include <string>
#include <vector>

namespace oishell::test {

struct SandboxRun {
  int status = -1;  // oishell's exit status (the command's, 128+N for signal N, 125/126 for policy/sandbox errors)
  std::string out;  // stdout
  std::string err;  // stderr
};

// `oishell run <oishell_args> -- <command>`; the probe's directory is always added read-only (--ro).
SandboxRun run_sandboxed(const std::vector<std::string>& oishell_args, const std::vector<std::string>& command,
                         int timeout_seconds = 60);

// Runs `oishell-probe <probe_args>` in the sandbox and returns its first stdout line ("ok", "EACCES", ...), or
// "status=N: <stderr>" when the sandbox or the probe failed.
std::string probe(const std::vector<std::string>& oishell_args, const std::vector<std::string>& probe_args);

// The Landlock ABI the sandboxes of these tests use: the kernel's, capped by OISHELL_LANDLOCK_ABI as `oishell run`
// reads it from the environment it inherits from the test (the CI runs the suites at every ABI from 0 to 7).
int sandbox_landlock_abi();

// `denial` when the sandbox's Landlock ABI has the rule (introduced by ABI `since`), `otherwise` below it: the
// outcome of the next layer that holds the same guarantee (policy/guarantees.h).
std::string landlock_or(int since, const std::string& denial, const std::string& otherwise);

// The same probe run on the host, without a sandbox: what the action does when nothing stops it.
std::string probe_on_host(const std::vector<std::string>& probe_args);
// `command` run on the host, without a sandbox, its output captured.
SandboxRun run_on_host(const std::vector<std::string>& command, int timeout_seconds = 60);

// `oishell run <oishell_args> -- <command>` started in the background, as a user's shell starts it (stdin and
// stdout on /dev/null), for tests that signal it at chosen moments. `extra_env` ("K=V") is added to the
// environment; its stderr is readable from `stderr_fd` (on /dev/null unless `capture_stderr`); it runs in `cwd`
// when not empty, and leads a process group of its own with `own_group`. Nothing is added to its arguments.
struct BackgroundOishell {
  pid_t pid = -1;
  int stderr_fd = -1;  // read end; the caller closes it
};
BackgroundOishell start_oishell(const std::vector<std::string>& oishell_args, const std::vector<std::string>& command,
                                const std::vector<std::string>& extra_env = {}, const std::string& cwd = "",
                                bool capture_stderr = true, bool own_group = false);

// Reaps `pid` (a child of this process): its wait status, or -1 when it is still running after `timeout_ms`
// (it is then left running).
int wait_for_exit(pid_t pid, int timeout_ms);

// A wait status as a shell reports it: the exit code, or 128+N for death by signal N.
int shell_status(int wait_status);

// The processes whose parent is `parent` now (from /proc; zombies included), and the whole tree below it.
std::vector<pid_t> children_of(pid_t parent);
std::vector<pid_t> descendants_of(pid_t root);

// A fresh directory under $TMPDIR, removed (recursively) when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `content` to path()/relative (creating parent dirs); returns the full path.
  std::string write(const std::string& relative, const std::string& content) const;

 private:
  std::string path_;
};

// A file in /etc, made by the test's user (root, in the tests that use it) with exactly `mode`, for the duration of
// a test; removed again.
class EtcFile {
 public:
  explicit EtcFile(mode_t mode);
  ~EtcFile();
  EtcFile(const EtcFile&) = delete;
  EtcFile& operator=(const EtcFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline const char* oishell_bin() { return OISHELL_BIN; }
inline const char* probe_bin() { return OISHELL_PROBE_BIN; }

}  // namespace oishell::test
