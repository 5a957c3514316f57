#pragma once
// Supervisor side, for a root caller (runtime/inside/userns.h): the binds the policy names (the workspace,
// read_only and read_write paths; not the system directories) are opened and cloned here, where the supervisor has
// the host's privileges (the sandbox's root is an unused id outside and could not reach a path below a directory
// only root may search), and init attaches them in place of its own clones (runtime/inside/mount_plan.h).
// Only what the sandbox must write as the caller is id-mapped with init's user namespace, so that there it belongs
// to the sandbox's uid 0 and what it creates is owned by root on the host. Everything else is bound as the host
// has it, like the system directories: its root-only files are "other" to the sandbox (issue 33: with read-only
// binds mapped too, a policy listing /etc under read_only made /etc/ssl/private and /etc/sudoers readable).
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"

namespace oishell {

// True for the mount steps that get a tree from the supervisor: bind_ro and bind_rw that are not system
// directories. Both ends use it to pair the trees with the steps, in order.
bool takes_supervisor_tree(const MountStep& step);

// One detached tree per step of spec.mounts for which takes_supervisor_tree() holds, in order: the host path
// opened without following links, cloned with its submounts (open_tree), made nosuid and nodev (and read-only for
// bind_ro) and, where policy::id_mapped_for_root_caller() holds (policy/mount_plan.h: the non-system bind_rw steps
// and the bind_ro steps inside them), id-mapped with the user namespace `userns_fd`
// (mount_setattr MOUNT_ATTR_IDMAP). Errors name the path; a file system that cannot be id-mapped is an error,
// never a weaker sandbox.
Result<std::vector<UniqueFd>> prepare_root_caller_binds(const SandboxSpec& spec, int userns_fd);

}  // namespace oishell
