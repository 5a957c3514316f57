#pragma once
// `oishell learn`'s eyes: the calls that name a path (SeccompSpec::observe_paths; seccomp_sets::observed_path_rules)
// arrive here as seccomp notifications. The path is read from the caller, made absolute (its cwd, or the directory
// fd of an *at() call), recorded with what the call does to it and which program made it, and the call is let
// through unchanged (SECCOMP_USER_NOTIF_FLAG_CONTINUE). Nothing is decided on what was read: the sandbox's mounts,
// Landlock and the deny sets still hold every call, so a caller that rewrites its path after the read only spoils
// its own record.
#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/broker/caller.h"

namespace oishell {

struct PathObservation {
  enum class Mode { read, exec, write };  // write: opened for writing, created, removed, renamed, linked, truncated
  std::string path;     // absolute, as the sandbox names it (lexically normalised: no ".", "..", "//")
  Mode mode = Mode::read;
  std::string program;  // the caller's comm (for an exec: the program that execs)
  uint64_t count = 0;
};

class PathObserver {
 public:
  explicit PathObserver(int notify_fd) : notify_fd_(notify_fd) {}
  // Records the call's paths and answers CONTINUE. Thread-safe.
  void handle(const seccomp_notif& notification);
  // Everything recorded so far, sorted by path.
  std::vector<PathObservation> observations() const;

 private:
  void record(const std::string& path, PathObservation::Mode mode, const std::string& program);
  int notify_fd_;
  mutable std::mutex mutex_;
  broker::CallerFiles callers_;
  std::map<std::tuple<std::string, int, std::string>, uint64_t> counts_;  // (path, mode, program) -> calls
};

// "/a/b/../c/./d//e" -> "/a/c/d/e"; `path` is absolute.
std::string normalise_absolute(const std::string& path);

}  // namespace oishell
