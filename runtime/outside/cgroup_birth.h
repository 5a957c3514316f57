#pragma once
// Sandbox init born in its cgroup. On cgroup v2, where a subtree delegated to this process passes the memory and
// pids controllers down (root, or a user's user@UID.service), the sandbox's group is made before init is cloned —
// limit-less, with the cgroup janitor watching it from before the mkdir — and init is cloned straight into it
// (clone3 CLONE_INTO_CGROUP, Linux 5.7): no process is ever moved between cgroups, so start-up never waits for the
// move (an RCU grace period without favordynmods, docs/kernels.md). ResourceLimits writes memory.max and
// pids.max into the group while init builds its mount tree, before `joined`: init starts nothing before that.
//
// Elsewhere (cgroup v1 as on hosts whose v2 hierarchy lacks the controllers, no delegation, a kernel that refuses
// the flag) init is cloned as before and moved into the cgroups once ResourceLimits has made them; `why_not` says
// why, and `oishell doctor` prints it.
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "runtime/outside/cgroup_fs.h"
#include "runtime/outside/cgroup_janitor.h"

namespace oishell {

// The controllers a group init is born in must get: those of the limits a policy can set.
inline const std::vector<std::string>& birth_controllers() {
  static const std::vector<std::string> controllers = {"memory", "pids"};
  return controllers;
}

struct BirthCgroup {
  // Declared first, destroyed last: the janitor outlives the group's removal.
  CgroupJanitor janitor;      // watches `group` since before it was made; told init's pidfd after the clone
  cgroup::OwnedCgroup group;  // empty when there is none to be born in
  UniqueFd dir;               // the group's directory (O_DIRECTORY), for clone_args.cgroup; closed after the clone
  std::string why_not;        // why init is not born in a group: set whenever `group` is empty, or the clone refused it
};

// Makes the group for init to be born in (the janitor started first), or says why there is none. Never fails:
// whatever is in the way becomes `why_not`, and init is cloned and moved as before. OISHELL_CLONE_INTO_CGROUP=0 in
// the environment asks for the clone-then-move start (to measure one start beside the other).
BirthCgroup prepare_birth_cgroup(const cgroup::OwnCgroups& own);

// The sentence `oishell doctor` and the `start` event say: "init born in its cgroup DIR (clone3 CLONE_INTO_CGROUP,
// no migration)" or "init cloned, then moved into its cgroups: WHY".
std::string init_start_note(bool born, const std::string& dir, const std::string& why_not);

}  // namespace oishell
