#pragma once
// cgroup file-system helpers shared by runtime/limits and runtime/kernel_probe: where each hierarchy is mounted,
// which cgroup this process is in, and one owned cgroup directory (create, write, kill everything, remove).
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace oishell::cgroup {

// Where this process's cgroups are: /proc/self/mountinfo and /proc/self/cgroup, each read once by read().
class OwnCgroups {
 public:
  static OwnCgroups read();
  // The directory of our cgroup in the v1 hierarchy carrying `controller` ("memory", "pids"), e.g.
  // /sys/fs/cgroup/memory/process_api/0e8f; nullopt when that controller has no v1 mount.
  std::optional<std::string> v1_dir(const std::string& controller) const;
  // Our cgroup directory in the unified (v2) hierarchy, wherever it is mounted; nullopt without one.
  std::optional<std::string> v2_dir() const;

 private:
  struct Mount {
    std::string root, point, fstype, super_options;
  };
  std::vector<Mount> mounts_;   // the cgroup and cgroup2 mounts
  std::string membership_;      // /proc/self/cgroup: "id:controllers:path" lines
};

// OwnCgroups::read().v1_dir(controller) and .v2_dir(), for a single question.
std::optional<std::string> v1_own_dir(const std::string& controller);
std::optional<std::string> v2_own_dir();

// Controllers a v2 cgroup directory offers to its children ("cgroup.controllers"), e.g. {"memory", "pids"}.
std::vector<std::string> v2_controllers(const std::string& dir);

// Reads a whole small file; nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);
// One write(2) of `value` to `path`, with the path, value and errno in the error.
Status write_file(const std::string& path, const std::string& value);
// "oom_kill 3" in "key value" lines (memory.oom_control, memory.events); nullopt when the key is absent.
std::optional<uint64_t> keyed_value(const std::string& text, const std::string& key);

// One cgroup directory this process created. remove() kills every process left in it and removes it; the
// destructor calls remove().
class OwnedCgroup {
 public:
  // mkdir(parent/name, 0755). Fails (EACCES, EROFS...) when the parent is not writable for us.
  static Result<OwnedCgroup> create(const std::string& parent, const std::string& name);
  OwnedCgroup() = default;
  OwnedCgroup(OwnedCgroup&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  OwnedCgroup& operator=(OwnedCgroup&& other) noexcept;
  OwnedCgroup(const OwnedCgroup&) = delete;
  OwnedCgroup& operator=(const OwnedCgroup&) = delete;
  ~OwnedCgroup() { remove(); }

  const std::string& path() const { return path_; }
  bool has(const std::string& file) const;
  // write(2) of `value` to path()/file, with the file and errno in the error.
  Status write(const std::string& file, const std::string& value) const;
  std::optional<std::string> read(const std::string& file) const { return read_file(path_ + "/" + file); }
  Status add_process(pid_t pid) const { return write("cgroup.procs", std::to_string(pid)); }
  // SIGKILL to everything in the group (cgroup.kill on v2 where present), then rmdir, retried for up to ~2 s.
  void remove();

 private:
  explicit OwnedCgroup(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace oishell::cgroup
