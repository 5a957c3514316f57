#pragma once
// Supervisor side, for a root caller (runtime/inside/userns.h): the binds the policy names (the workspace, read_only and
// read_write paths; not the system directories) are cloned here, where the supervisor has the host's privileges,
// and id-mapped with init's user namespace, so that inside they belong to the sandbox's uid 0 (outside: an unused
// id) and what the sandbox creates is owned by root on the host. Init attaches them in place of its own clones
// (runtime/inside/mount_plan.h). System directories stay unmapped: their root-only files are "other" to the sandbox.
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"

namespace oishell {

// True for the mount steps that get an id-mapped tree from the supervisor: bind_ro and bind_rw that are not
// system directories. Both ends use it to pair the trees with the steps, in order.
bool takes_idmapped_tree(const MountStep& step);

// One detached tree per such step of spec.mounts, in order: the host path opened without following links,
// cloned with its submounts (open_tree), made nosuid and nodev (and read-only for bind_ro), id-mapped with the
// user namespace `userns_fd` (mount_setattr MOUNT_ATTR_IDMAP). Errors name the path; a file system that cannot be
// id-mapped is an error, never a weaker sandbox.
Result<std::vector<UniqueFd>> prepare_idmapped_binds(const SandboxSpec& spec, int userns_fd);

}  // namespace oishell
