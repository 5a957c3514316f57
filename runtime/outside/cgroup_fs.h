#pragma once
// cgroup file-system helpers shared by runtime/outside/limits and runtime/outside/kernel_probe: where each hierarchy is mounted,
// which cgroup this process is in, where in the unified hierarchy a delegated subtree lets it make a group, and one
// owned cgroup directory (create, write, kill everything, remove).
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace oishell::cgroup {

// The calls on cgroup directories whose effect in a cgroup file system differs from a plain directory tree: mkdir
// makes the interface files (cgroup.procs, memory.max...), rmdir removes them with the directory (EBUSY while
// processes are in it), and who may write where is a matter of delegation (ownership of the directory and of its
// cgroup.procs and cgroup.subtree_control). The kernel's by default; tests imitate them in a plain directory tree.
class TreeOps {
 public:
  virtual ~TreeOps() = default;
  // 0 or the errno.
  virtual int make_dir(const std::string& path) const = 0;
  virtual int remove_dir(const std::string& path) const = 0;
  // Whether this process may write `path`: create groups in a directory, write a file.
  virtual bool may_write(const std::string& path) const = 0;
};
// mkdir(2) with mode 0755, rmdir(2), faccessat(W_OK, AT_EACCESS).
const TreeOps& kernel_tree_ops();

// Where this process's cgroups are: /proc/self/mountinfo and /proc/self/cgroup, each read once by read().
class OwnCgroups {
 public:
  static OwnCgroups read();
  // From the text of a mountinfo and of a /proc/PID/cgroup file, with `ops` for the directories: tests mount a
  // fake tree (a directory of theirs) this way.
  static OwnCgroups parse(std::string_view mountinfo, std::string membership, const TreeOps& ops = kernel_tree_ops());
  // The directory of our cgroup in the v1 hierarchy carrying `controller` ("memory", "pids"), e.g.
  // /sys/fs/cgroup/memory/process_api/0e8f; nullopt when that controller has no v1 mount.
  std::optional<std::string> v1_dir(const std::string& controller) const;
  // Our cgroup directory in the unified (v2) hierarchy, wherever it is mounted; nullopt without one.
  std::optional<std::string> v2_dir() const;
  // The top of the unified hierarchy as mounted (/sys/fs/cgroup; the namespace's root inside a cgroup namespace).
  std::optional<std::string> v2_mount_point() const;
  const TreeOps& ops() const { return *ops_; }

 private:
  struct Mount {
    std::string root, point, fstype, super_options;
  };
  const Mount* v2_mount() const;
  std::vector<Mount> mounts_;   // the cgroup and cgroup2 mounts
  std::string membership_;      // /proc/self/cgroup: "id:controllers:path" lines
  const TreeOps* ops_ = &kernel_tree_ops();
};

// OwnCgroups::read().v1_dir(controller) and .v2_dir(), for a single question.
std::optional<std::string> v1_own_dir(const std::string& controller);
std::optional<std::string> v2_own_dir();

// Controllers a v2 cgroup directory offers to its children ("cgroup.controllers"), e.g. {"memory", "pids"}.
std::vector<std::string> v2_controllers(const std::string& dir);
// Controllers a v2 cgroup directory passes down ("cgroup.subtree_control").
std::vector<std::string> v2_subtree_control(const std::string& dir);

// Where, in the unified hierarchy, a group for the sandbox can be made that gets `controllers` ("memory", "pids").
// Candidates: our own cgroup, then each ancestor up to the mount, as long as this process may manage it, i.e. it is
// delegated to it (systemd's user@UID.service subtree, a container's cgroup, or anything for root): it may make
// groups there and write its cgroup.procs (moving sandbox init out of our cgroup into the group needs write access
// to the common ancestor's). The first candidate whose cgroup.subtree_control passes the controllers down already
// is taken (nothing of the tree changes); else the first where they can be enabled: offered in its
// cgroup.controllers, its cgroup.subtree_control writable, and no process of its own (the kernel refuses to enable
// domain controllers for a non-root cgroup with processes: EBUSY, so our own cgroup rarely qualifies).
struct V2Parent {
  std::string dir;
  std::vector<std::string> enable;  // to add to dir/cgroup.subtree_control before the group is made
};
// The error says why no candidate qualified, candidate by candidate.
Result<V2Parent> find_v2_parent(const OwnCgroups& own, const std::vector<std::string>& controllers);
// Writes parent.enable ("+memory +pids") to parent.dir/cgroup.subtree_control; nothing when it is empty.
Status enable_controllers(const V2Parent& parent);

// "oishell-PID-N": the name of a sandbox's cgroup, N counting this process's groups (tests find leftovers by it).
std::string sandbox_group_name();

// Whether any cgroup hierarchy in this mount table (/proc/self/mountinfo's text) is mounted with `favordynmods`:
// then moving a process between cgroups does not wait for an RCU grace period (the kernel's
// cgroup_threadgroup_rwsem is kept in its writer-friendly mode, for every hierarchy), at some cost to fork and exit.
struct CgroupMounts {
  bool favordynmods = false;
  std::string mount_point;  // a cgroup hierarchy's mount point, cgroup2 first; empty when none is mounted
};
CgroupMounts cgroup_mounts(std::string_view mountinfo);

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
  static Result<OwnedCgroup> create(const std::string& parent, const std::string& name,
                                    const TreeOps& ops = kernel_tree_ops());
  OwnedCgroup() = default;
  OwnedCgroup(OwnedCgroup&& other) noexcept : path_(std::move(other.path_)), ops_(other.ops_) { other.path_.clear(); }
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
  OwnedCgroup(std::string path, const TreeOps& ops) : path_(std::move(path)), ops_(&ops) {}
  std::string path_;
  const TreeOps* ops_ = &kernel_tree_ops();
};

}  // namespace oishell::cgroup
