#include "runtime/mount_plan.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "runtime/mount_ops.h"
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
  }
  return step.target;
}

bool is_bind(const MountStep& step) {
  return step.kind == MountStep::Kind::bind_ro || step.kind == MountStep::Kind::bind_rw;
}

Result<PreparedBind> prepare_bind(const MountStep& step) {
  PreparedBind bind;
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

// `target` made absent: a directory gets an empty read-only tmpfs over it, anything else an empty mode-0000 file
// bound read-only (so reading it fails with EACCES without capabilities). Absent targets need nothing.
Status hide(int root_fd, const std::string& target, int empty_files_fd) {
  auto found = mounts::lookup(root_fd, target);
  if (!found.is_ok()) return found.status().errno_value() == ENOENT ? Status::ok() : found.status();
  struct stat st;
  if (::fstat(found->get(), &st) != 0) return Status::from_errno(errno, "fstat");
  if (S_ISLNK(st.st_mode)) return Status::error("cannot hide a symlink (compile resolves symlinks)");
  if (S_ISDIR(st.st_mode)) {
    auto fs = mounts::new_filesystem("tmpfs", {{"mode", "0755"}, {"size", "4k"}},
                                     MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (!fs.is_ok()) return fs.status();
    return mounts::attach(fs->get(), found->get());
  }
  auto empty = mounts::lookup(empty_files_fd, "/empty");
  if (!empty.is_ok()) return empty.status();
  auto tree = mounts::clone_tree(empty->get(), /*recursive=*/false);
  if (!tree.is_ok()) return tree.status();
  OI_TRY(mounts::set_attributes(tree->get(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false));
  return mounts::attach(tree->get(), found->get());
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

// A private tmpfs (never attached) holding the empty file that hidden files are bound from.
Result<UniqueFd> make_empty_file_source() {
  auto fs = mounts::new_filesystem("tmpfs", {{"mode", "0755"}, {"size", "4k"}}, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (!fs.is_ok()) return fs.status();
  int fd = ::openat(fs->get(), "empty", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
  if (fd < 0) return Status::from_errno(errno, "creating the empty file for hidden files");
  ::close(fd);
  return fs;
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

Status apply_step(const MountStep& step, PreparedBind* bind, int root_fd, UniqueFd* empty_files) {
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
      auto fs = mounts::new_filesystem("tmpfs", {{"mode", sticky ? "1777" : "0755"}},
                                       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
      if (!fs.is_ok()) return fs.status();
      return mounts::attach(fs->get(), target->get());
    }
    case MountStep::Kind::proc: {
      auto target = mounts::ensure(root_fd, step.target, NodeType::directory);
      if (!target.is_ok()) return target.status();
      return mount_fresh_proc(target->get());
    }
    case MountStep::Kind::dev: {
      auto target = mounts::ensure(root_fd, step.target, NodeType::directory);
      if (!target.is_ok()) return target.status();
      return mount_minimal_dev(target->get());
    }
    case MountStep::Kind::hide: {
      if (!*empty_files) {
        auto source = make_empty_file_source();
        if (!source.is_ok()) return source.status();
        *empty_files = std::move(source.value());
      }
      return hide(root_fd, step.target, empty_files->get());
    }
    case MountStep::Kind::protect:
      return protect(root_fd, step.target);
    case MountStep::Kind::symlink:
      return make_symlink(root_fd, step.target, step.source);
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

Status apply_mount_plan(const SandboxSpec& spec) {
  // Nothing done here may propagate back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Status::from_errno(errno, "mount(\"/\", MS_REC|MS_PRIVATE)");
  }
  std::vector<PreparedBind> binds(spec.mounts.size());
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    const MountStep& step = spec.mounts[i];
    if (!is_bind(step)) continue;
    auto prepared = prepare_bind(step);
    if (!prepared.is_ok()) return prepared.status().with_context(describe(step));
    binds[i] = std::move(prepared.value());
  }

  auto root = mounts::new_filesystem("tmpfs", {{"mode", "0755"}}, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (!root.is_ok()) return root.status().with_context("new root");
  // The root needs a mount point in this namespace for pivot_root; the host's /tmp is as good as any (it is
  // only covered in this private namespace, and every bind source was opened above).
  auto mount_point = mounts::open_host_path("/tmp");
  if (!mount_point.is_ok()) return mount_point.status().with_context("new root");
  OI_TRY_CTX(mounts::attach(root->get(), mount_point->get()), "new root: attach on /tmp");

  UniqueFd empty_files;
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    OI_TRY_CTX(apply_step(spec.mounts[i], &binds[i], root->get(), &empty_files), describe(spec.mounts[i]));
  }
  OI_TRY_CTX(mounts::set_attributes(root->get(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false),
             "new root: read-only");
  return pivot_into(root->get()).with_context("pivot_root");
}

}  // namespace oishell
