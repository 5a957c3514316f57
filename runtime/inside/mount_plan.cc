#include "runtime/inside/mount_plan.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "runtime/outside/idmapped_binds.h"
#include "runtime/inside/mount_ops.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

using mounts::NodeType;

// A bind source opened and cloned before the new root exists.
struct PreparedBind {
  UniqueFd tree;
  NodeType type = NodeType::directory;
  bool present = false;
};

std::string describe(const MountStep& step) {
  switch (step.kind) {
    case MountStep::Kind::bind_ro: return "bind_ro " + step.source + " -> " + step.target;
    case MountStep::Kind::bind_rw: return "bind_rw " + step.source + " -> " + step.target;
    case MountStep::Kind::tmpfs: return "tmpfs " + step.target;
    case MountStep::Kind::proc: return "proc " + step.target;
    case MountStep::Kind::dev: return "dev " + step.target;
    case MountStep::Kind::hide: return "hide " + step.target;
    case MountStep::Kind::protect: return "protect " + step.target;
    case MountStep::Kind::symlink: return "symlink " + step.target + " -> " + step.source;
    case MountStep::Kind::file: return "file " + step.target;
  }
  return step.target;
}

bool is_bind(const MountStep& step) {
  return step.kind == MountStep::Kind::bind_ro || step.kind == MountStep::Kind::bind_rw;
}

// `prepared`: a root caller's tree from the supervisor (already nosuid, nodev, read-only for bind_ro, and id-mapped
// where it is written as the caller: runtime/outside/idmapped_binds.h).
Result<PreparedBind> prepare_bind(const MountStep& step, UniqueFd prepared) {
  PreparedBind bind;
  if (prepared) {
    struct stat st;
    if (::fstat(prepared.get(), &st) != 0) return Status::from_errno(errno, "fstat(the supervisor's tree)");
    bind.type = S_ISDIR(st.st_mode) ? NodeType::directory : NodeType::file;
    bind.tree = std::move(prepared);
    bind.present = true;
    return bind;
  }
  auto source = mounts::open_host_path(step.source);
  if (!source.is_ok()) {
    if (step.optional && source.status().errno_value() == ENOENT) return bind;
    return source.status();
  }
  struct stat st;
  if (::fstat(source->get(), &st) != 0) return Status::from_errno(errno, "fstat");
  bind.type = S_ISDIR(st.st_mode) ? NodeType::directory : NodeType::file;
  auto tree = mounts::clone_tree(source->get(), /*recursive=*/true);
  if (!tree.is_ok()) return tree.status();
  uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  if (step.kind == MountStep::Kind::bind_ro) attrs |= MOUNT_ATTR_RDONLY;
  OI_TRY(mounts::set_attributes(tree->get(), attrs, /*recursive=*/true));
  bind.tree = std::move(tree.value());
  bind.present = true;
  return bind;
}

// Where the scratch tmpfs and the sources tmpfs are attached in the new root while the plan is applied (then
// detached and removed).
constexpr const char* kScratchName = ".oishell-scratch";
constexpr const char* kSourcesName = ".oishell-sources";

// Detaches what is mounted on the new root's `name` (the clones made of it keep it) and removes the mount point.
Status detach_mount_point(int root_fd, const char* name) {
  if (::fchdir(root_fd) != 0) return Status::from_errno(errno, "fchdir(new root)");
  if (::umount2(name, MNT_DETACH) != 0) return Status::from_errno(errno, std::string("umount2(") + name + ")");
  if (::unlinkat(root_fd, name, AT_REMOVEDIR) != 0) return Status::from_errno(errno, std::string("rmdir(") + name + ")");
  return Status::ok();
}

// The sandbox's one scratch tmpfs (see apply_mount_plan): made at its first use; each tmpfs step, and /dev/shm,
// gets a clone of a directory of its own in it.
class Scratch {
 public:
  Scratch(int root_fd, uint64_t bytes) : root_fd_(root_fd), bytes_(bytes) {}

  // A detached clone of a new directory of the scratch tmpfs, with exactly `mode`.
  Result<UniqueFd> directory(mode_t mode) {
    if (!fs_) {
      auto fs = mounts::new_filesystem("tmpfs",
                                       {{"mode", "0755"},
                                        {"size", std::to_string(bytes_)},
                                        {"nr_inodes", std::to_string(scratch_tmpfs_inodes(bytes_))}},
                                       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
      if (!fs.is_ok()) return fs.status().with_context("scratch tmpfs");
      auto at = mounts::ensure(root_fd_, kScratchName, NodeType::directory);
      if (!at.is_ok()) return at.status().with_context("scratch tmpfs");
      OI_TRY_CTX(mounts::attach(fs->get(), at->get()), "scratch tmpfs");
      fs_ = std::move(fs.value());  // names the attached tmpfs's root from now on
    }
    const std::string name = std::to_string(next_++);
    if (::mkdirat(fs_.get(), name.c_str(), 0700) != 0) return Status::from_errno(errno, "mkdirat(scratch/" + name + ")");
    if (::fchmodat(fs_.get(), name.c_str(), mode, 0) != 0) return Status::from_errno(errno, "fchmodat(scratch/" + name + ")");
    int tree = sys::open_tree(fs_.get(), name.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (tree < 0) return Status::from_errno(errno, "open_tree(scratch/" + name + ", OPEN_TREE_CLONE)");
    return UniqueFd(tree);
  }

  // Detaches the tmpfs from its place in the root (the clones keep it) and removes the mount point.
  Status detach() {
    if (!fs_) return Status::ok();
    fs_.reset();
    return detach_mount_point(root_fd_, kScratchName).with_context("scratch tmpfs");
  }

 private:
  int root_fd_;
  uint64_t bytes_;
  UniqueFd fs_;
  int next_ = 0;
};

// The sandbox's one private tmpfs of read-only sources (attached in the new root only while the plan is applied,
// like the scratch tmpfs: older kernels refuse open_tree(OPEN_TREE_CLONE) of a mount in no namespace with EINVAL,
// which refused every sandbox on Debian 12's 6.1 ("hide /etc/gshadow: open_tree(empty, OPEN_TREE_CLONE): EINVAL";
// docs/kernels.md); only read-only clones of its entries stay):
// the empty file and the empty directory that hidden paths are covered with, and the contents of `file` steps.
// Made at its first use and sized for the plan: one filesystem instead of one per hidden directory and file.
class Sources {
 public:
  Sources(int root_fd, const SandboxSpec& spec) : root_fd_(root_fd) {
    for (const MountStep& step : spec.mounts) {
      if (step.kind != MountStep::Kind::file) continue;
      ++files_;
      bytes_ += (step.source.size() + 4095) / 4096 * 4096;
    }
  }

  // A detached read-only clone of the empty file (mode 0000) or of the empty directory.
  Result<UniqueFd> empty(bool directory) { return clone(directory ? "empty-dir" : "empty"); }

  // A detached read-only clone of a new file holding `contents` (mode 0444).
  Result<UniqueFd> file(const std::string& contents) {
    OI_TRY(open());
    const std::string name = "file-" + std::to_string(next_++);
    UniqueFd out(::openat(fs_.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444));
    if (!out) return Status::from_errno(errno, "creating the file's contents");
    for (size_t done = 0; done < contents.size();) {
      ssize_t n = ::write(out.get(), contents.data() + done, contents.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::from_errno(errno, "writing the file's contents");
      done += static_cast<size_t>(n);
    }
    return clone(name);
  }

 private:
  Status open() {
    if (fs_) return Status::ok();
    auto fs = mounts::new_filesystem("tmpfs",
                                     {{"mode", "0755"},
                                      {"size", std::to_string(bytes_ + 4096)},
                                      {"nr_inodes", std::to_string(files_ + 3)}},
                                     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (!fs.is_ok()) return fs.status().with_context("sources tmpfs");
    UniqueFd empty(::openat(fs->get(), "empty", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0));
    if (!empty) return Status::from_errno(errno, "creating the empty file for hidden files");
    if (::mkdirat(fs->get(), "empty-dir", 0755) != 0) return Status::from_errno(errno, "mkdirat(empty-dir)");
    auto at = mounts::ensure(root_fd_, kSourcesName, NodeType::directory);
    if (!at.is_ok()) return at.status().with_context("sources tmpfs");
    OI_TRY_CTX(mounts::attach(fs->get(), at->get()), "sources tmpfs");
    fs_ = std::move(fs.value());  // names the attached tmpfs's root from now on
    return Status::ok();
  }

 public:
  // Detaches the tmpfs from the new root (the clones keep it) and removes the mount point.
  Status detach() {
    if (!fs_) return Status::ok();
    fs_.reset();
    return detach_mount_point(root_fd_, kSourcesName).with_context("sources tmpfs");
  }

 private:

  Result<UniqueFd> clone(const std::string& name) {
    OI_TRY(open());
    int tree = sys::open_tree(fs_.get(), name.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (tree < 0) return Status::from_errno(errno, "open_tree(" + name + ", OPEN_TREE_CLONE)");
    UniqueFd out(tree);
    OI_TRY(mounts::set_attributes(out.get(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                                 MOUNT_ATTR_NOEXEC, false));
    return out;
  }

  int root_fd_;
  size_t files_ = 0;
  uint64_t bytes_ = 0;
  UniqueFd fs_;
  int next_ = 0;
};

// `target` made absent: a directory gets the empty directory over it, anything else the empty mode-0000 file (so
// reading it fails with EACCES without capabilities), both read-only. Absent targets need nothing.
Status hide(int root_fd, const std::string& target, Sources& sources) {
  auto found = mounts::lookup(root_fd, target);
  if (!found.is_ok()) return found.status().errno_value() == ENOENT ? Status::ok() : found.status();
  struct stat st;
  if (::fstat(found->get(), &st) != 0) return Status::from_errno(errno, "fstat");
  if (S_ISLNK(st.st_mode)) return Status::error("cannot hide a symlink (compile resolves symlinks)");
  auto cover = sources.empty(S_ISDIR(st.st_mode));
  if (!cover.is_ok()) return cover.status();
  return mounts::attach(cover->get(), found->get());
}

// A path inside a writable bind re-bound read-only over itself, where it exists.
Status protect(int root_fd, const std::string& target) {
  auto found = mounts::lookup(root_fd, target);
  if (!found.is_ok()) return found.status().errno_value() == ENOENT ? Status::ok() : found.status();
  auto tree = mounts::clone_tree(found->get(), /*recursive=*/true);
  if (!tree.is_ok()) return tree.status();
  OI_TRY(mounts::set_attributes(tree->get(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true));
  return mounts::attach(tree->get(), found->get());
}

// A symlink in the new root (e.g. /bin -> usr/bin); its parent directories are created in the root tmpfs.
Status make_symlink(int root_fd, const std::string& target, const std::string& contents) {
  size_t slash = target.find_last_of('/');
  std::string parent = slash == 0 || slash == std::string::npos ? "/" : target.substr(0, slash);
  auto dir = mounts::ensure(root_fd, parent, NodeType::directory);
  if (!dir.is_ok()) return dir.status();
  std::string name = target.substr(slash + 1);
  if (::symlinkat(contents.c_str(), dir->get(), name.c_str()) != 0) {
    return Status::from_errno(errno, "symlinkat(\"" + target + "\")");
  }
  return Status::ok();
}

// `step.target` covered by a read-only file holding `step.source`, made on the sources tmpfs (a read-only clone
// of it is attached, nothing else). The target is not followed: a symlink (systemd-resolved's /etc/resolv.conf ->
// ../run/systemd/resolve/stub-resolv.conf, whose target does not exist inside) is itself the mount point, so
// every reader sees the file, and Landlock's rule for the directory that holds the link covers it.
Status bind_file(int root_fd, const MountStep& step, Sources& sources) {
  size_t slash = step.target.find_last_of('/');
  if (slash == std::string::npos || slash + 1 == step.target.size()) return Status::error("not a file path");
  auto parent = mounts::lookup(root_fd, slash == 0 ? "/" : step.target.substr(0, slash));
  if (!parent.is_ok()) {
    return step.optional && parent.status().errno_value() == ENOENT ? Status::ok() : parent.status();
  }
  const std::string name = step.target.substr(slash + 1);
  UniqueFd target(::openat(parent->get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!target) {
    return step.optional && errno == ENOENT ? Status::ok() : Status::from_errno(errno, "openat(O_PATH|O_NOFOLLOW)");
  }
  struct stat st;
  if (::fstat(target.get(), &st) != 0) return Status::from_errno(errno, "fstat");
  if (S_ISDIR(st.st_mode)) return Status::error("the target is a directory");
  auto contents = sources.file(step.source);
  if (!contents.is_ok()) return contents.status();
  return mounts::attach(contents->get(), target.get());
}

Status apply_step(const MountStep& step, PreparedBind* bind, int root_fd, Sources& sources, Scratch& scratch,
                  std::vector<std::string>* degraded) {
  switch (step.kind) {
    case MountStep::Kind::bind_ro:
    case MountStep::Kind::bind_rw: {
      if (!bind->present) return Status::ok();  // optional and absent on the host
      auto target = mounts::ensure(root_fd, step.target, bind->type);
      if (!target.is_ok()) return target.status();
      return mounts::attach(bind->tree.get(), target->get());
    }
    case MountStep::Kind::tmpfs: {
      auto target = mounts::ensure(root_fd, step.target, NodeType::directory);
      if (!target.is_ok()) return target.status();
      bool sticky = step.target == "/tmp" || step.target == "/var/tmp" || step.target == "/dev/shm";
      auto dir = scratch.directory(sticky ? 01777 : 0755);
      if (!dir.is_ok()) return dir.status();
      return mounts::attach(dir->get(), target->get());
    }
    case MountStep::Kind::proc: {
      auto target = mounts::ensure(root_fd, step.target, NodeType::directory);
      if (!target.is_ok()) return target.status();
      Status fresh = mount_fresh_proc(target->get());
      // The kernel refuses a new procfs where the one it would reveal more than is partly covered (a container's
      // masked /proc): with `process.own_proc: best_effort` the container's own, as it is.
      if (fresh.is_ok() || step.source.empty() || fresh.errno_value() != EPERM) return fresh;
      OI_TRY_CTX(bind_host_proc(step.source, target->get()), "the container's /proc (" + fresh.message() + ")");
      degraded->push_back(std::string(kSharedProcLoss));
      return Status::ok();
    }
    case MountStep::Kind::dev: {
      auto target = mounts::ensure(root_fd, step.target, NodeType::directory);
      if (!target.is_ok()) return target.status();
      auto shm = scratch.directory(01777);
      if (!shm.is_ok()) return shm.status().with_context("/dev/shm");
      return mount_minimal_dev(target->get(), shm->get());
    }
    case MountStep::Kind::hide:
      return hide(root_fd, step.target, sources);
    case MountStep::Kind::protect:
      return protect(root_fd, step.target);
    case MountStep::Kind::symlink:
      return make_symlink(root_fd, step.target, step.source);
    case MountStep::Kind::file:
      return bind_file(root_fd, step, sources);
  }
  return Status::error("unknown mount step");
}

Status pivot_into(int root_fd) {
  if (::fchdir(root_fd) != 0) return Status::from_errno(errno, "fchdir(new root)");
  // pivot_root(".", "."): the old root ends up mounted over the new one; detaching "." removes it.
  if (sys::pivot_root(".", ".") != 0) return Status::from_errno(errno, "pivot_root");
  if (::umount2(".", MNT_DETACH) != 0) return Status::from_errno(errno, "umount2(old root, MNT_DETACH)");
  if (::chdir("/") != 0) return Status::from_errno(errno, "chdir(\"/\")");
  return Status::ok();
}

}  // namespace

uint64_t scratch_tmpfs_bytes(const SandboxSpec& spec) {
  // Three quarters: the processes keep a quarter, so that a full /tmp says ENOSPC before the memory cgroup (which
  // counts tmpfs pages too) kills anything.
  if (spec.limits.memory_bytes) return *spec.limits.memory_bytes / 4 * 3;
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return 1ULL << 30;
  return static_cast<uint64_t>(info.totalram) * info.mem_unit / 2;
}

uint64_t scratch_tmpfs_inodes(uint64_t bytes) { return std::max<uint64_t>(8192, bytes / (16 * 1024)); }

Status apply_mount_plan(const SandboxSpec& spec, std::vector<UniqueFd> supervisor_trees,
                        std::vector<std::string>* degraded) {
  // Nothing done here may propagate back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Status::from_errno(errno, "mount(\"/\", MS_REC|MS_PRIVATE)");
  }
  std::vector<PreparedBind> binds(spec.mounts.size());
  size_t next_tree = 0;
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    const MountStep& step = spec.mounts[i];
    if (!is_bind(step)) continue;
    UniqueFd prepared;
    if (!supervisor_trees.empty() && takes_supervisor_tree(step)) {
      if (next_tree >= supervisor_trees.size()) return Status::error("fewer of the supervisor's trees than binds");
      prepared = std::move(supervisor_trees[next_tree++]);
    }
    auto bind = prepare_bind(step, std::move(prepared));
    if (!bind.is_ok()) return bind.status().with_context(describe(step));
    binds[i] = std::move(bind.value());
  }
  if (next_tree != supervisor_trees.size()) return Status::error("more of the supervisor's trees than binds");

  // The root holds only mount points: small, and read-only once they exist.
  auto root = mounts::new_filesystem("tmpfs", {{"mode", "0755"}, {"size", "1m"}, {"nr_inodes", "16384"}},
                                     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (!root.is_ok()) return root.status().with_context("new root");
  // The root needs a mount point in this namespace for pivot_root; the host's /tmp is as good as any (it is
  // only covered in this private namespace, and every bind source was opened above).
  auto mount_point = mounts::open_host_path("/tmp");
  if (!mount_point.is_ok()) return mount_point.status().with_context("new root");
  OI_TRY_CTX(mounts::attach(root->get(), mount_point->get()), "new root: attach on /tmp");

  Sources sources(root->get(), spec);
  Scratch scratch(root->get(), scratch_tmpfs_bytes(spec));
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    OI_TRY_CTX(apply_step(spec.mounts[i], &binds[i], root->get(), sources, scratch, degraded),
               describe(spec.mounts[i]));
  }
  OI_TRY(scratch.detach());
  OI_TRY(sources.detach());
  OI_TRY_CTX(mounts::set_attributes(root->get(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false),
             "new root: read-only");
  return pivot_into(root->get()).with_context("pivot_root");
}

}  // namespace oishell
