#include "runtime/outside/idmapped_binds.h"

#include <sys/mount.h>

#include "policy/paths.h"
#include "runtime/inside/mount_ops.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

// What the sandbox writes as the caller.
bool writable_as_caller(const MountStep& step) { return step.kind == MountStep::Kind::bind_rw && !step.system; }

}  // namespace

bool takes_supervisor_tree(const MountStep& step) {
  return (step.kind == MountStep::Kind::bind_ro || step.kind == MountStep::Kind::bind_rw) && !step.system;
}

bool id_mapped_for_root_caller(const SandboxSpec& spec, size_t index) {
  const MountStep& step = spec.mounts.at(index);
  if (writable_as_caller(step)) return true;
  if (step.kind != MountStep::Kind::bind_ro || step.system) return false;
  // Sources are resolved host paths, opened without following links: beneath a writable bind's source on the host
  // is beneath it in that bind's tree (cloned and id-mapped with its submounts).
  for (const MountStep& other : spec.mounts) {
    if (writable_as_caller(other) && policy::path_within(step.source, other.source)) return true;
  }
  return false;
}

Result<std::vector<UniqueFd>> prepare_root_caller_binds(const SandboxSpec& spec, int userns_fd) {
  std::vector<UniqueFd> trees;
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    const MountStep& step = spec.mounts[i];
    if (!takes_supervisor_tree(step)) continue;
    const bool idmap = id_mapped_for_root_caller(spec, i);
    const std::string what = (idmap ? "id-mapping " : "binding ") + step.source + " for the root caller's sandbox";
    auto source = mounts::open_host_path(step.source);
    if (!source.is_ok()) return source.status().with_context(what);
    auto tree = mounts::clone_tree(source->get(), /*recursive=*/true);
    if (!tree.is_ok()) return tree.status().with_context(what);
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (step.kind == MountStep::Kind::bind_ro ? MOUNT_ATTR_RDONLY : 0);
    if (idmap) {
      attr.attr_set |= MOUNT_ATTR_IDMAP;
      attr.userns_fd = static_cast<uint64_t>(userns_fd);
    }
    if (sys::mount_setattr(tree->get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
      if (!idmap) return Status::from_errno(errno, "mount_setattr").with_context(what);
      return Status::from_errno(errno, "mount_setattr(MOUNT_ATTR_IDMAP)")
          .with_context(what + " (its file system, or one mounted below it, cannot be id-mapped; "
                               "run oishell as an ordinary user)");
    }
    trees.push_back(std::move(tree.value()));
  }
  return trees;
}

}  // namespace oishell
