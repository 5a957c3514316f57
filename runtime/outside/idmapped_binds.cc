#include "runtime/outside/idmapped_binds.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/statfs.h>

#include <cerrno>

#include "policy/mount_plan.h"
#include "runtime/inside/mount_ops.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

// Why a tree could not be id-mapped, and what fixes it: kernels before 5.12 have no id-mapped mounts (ENOSYS), and
// tmpfs can be id-mapped from 6.3 only (EINVAL on Debian 12's 6.1 for a workspace in a tmpfs /tmp; docs/kernels.md).
std::string idmap_refusal(int err, int tree_fd) {
  const std::string user = "run oishell as an ordinary user";
  if (err == ENOSYS) return "this kernel has no id-mapped mounts (Linux 5.12); oishell needs Linux 5.12 or later";
  struct statfs fs {};
  if (err == EINVAL && ::fstatfs(tree_fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
    return "a tmpfs can be id-mapped from Linux 6.3 on; " + user + ", or give a workspace on another file system";
  }
  return "its file system, or one mounted below it, cannot be id-mapped; " + user;
}

}  // namespace

bool takes_supervisor_tree(const MountStep& step) {
  return (step.kind == MountStep::Kind::bind_ro || step.kind == MountStep::Kind::bind_rw) && !step.system;
}

Result<std::vector<UniqueFd>> prepare_root_caller_binds(const SandboxSpec& spec, int userns_fd) {
  std::vector<UniqueFd> trees;
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    const MountStep& step = spec.mounts[i];
    if (!takes_supervisor_tree(step)) continue;
    const bool idmap = policy::id_mapped_for_root_caller(spec, i);
    const std::string what = (idmap ? "id-mapping " : "binding ") + step.source + " for the root caller's sandbox";
    auto source = mounts::open_host_path(step.source);
    if (!source.is_ok()) return source.status().with_context(what);
    auto tree = mounts::clone_tree(source->get(), /*recursive=*/true);
    if (!tree.is_ok()) return tree.status().with_context(what);
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (step.kind == MountStep::Kind::bind_ro) attr.attr_set |= MOUNT_ATTR_RDONLY;
    if (idmap) {
      attr.attr_set |= MOUNT_ATTR_IDMAP;
      attr.userns_fd = static_cast<uint64_t>(userns_fd);
    }
    if (sys::mount_setattr(tree->get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
      if (!idmap) return Status::from_errno(errno, "mount_setattr").with_context(what);
      const int err = errno;
      return Status::from_errno(err, "mount_setattr(MOUNT_ATTR_IDMAP)")
          .with_context(what + " (" + idmap_refusal(err, tree->get()) + ")");
    }
    trees.push_back(std::move(tree.value()));
  }
  return trees;
}

}  // namespace oishell
