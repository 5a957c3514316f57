#include "runtime/outside/idmapped_binds.h"

#include <sys/mount.h>

#include "runtime/inside/mount_ops.h"
#include "runtime/sys/syscalls.h"

namespace oishell {

bool takes_idmapped_tree(const MountStep& step) {
  return (step.kind == MountStep::Kind::bind_ro || step.kind == MountStep::Kind::bind_rw) && !step.system;
}

Result<std::vector<UniqueFd>> prepare_idmapped_binds(const SandboxSpec& spec, int userns_fd) {
  std::vector<UniqueFd> trees;
  for (const MountStep& step : spec.mounts) {
    if (!takes_idmapped_tree(step)) continue;
    const std::string what = "id-mapping " + step.source + " for the root caller's sandbox";
    auto source = mounts::open_host_path(step.source);
    if (!source.is_ok()) return source.status().with_context(what);
    auto tree = mounts::clone_tree(source->get(), /*recursive=*/true);
    if (!tree.is_ok()) return tree.status().with_context(what);
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                    (step.kind == MountStep::Kind::bind_ro ? MOUNT_ATTR_RDONLY : 0);
    attr.userns_fd = static_cast<uint64_t>(userns_fd);
    if (sys::mount_setattr(tree->get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
      return Status::from_errno(errno, "mount_setattr(MOUNT_ATTR_IDMAP)")
          .with_context(what + " (its file system, or one mounted below it, cannot be id-mapped; "
                               "run oishell as an ordinary user)");
    }
    trees.push_back(std::move(tree.value()));
  }
  return trees;
}

}  // namespace oishell
