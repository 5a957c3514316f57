#include "runtime/outside/cgroup_birth.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>

namespace oishell {

BirthCgroup prepare_birth_cgroup(const cgroup::OwnCgroups& own) {
  BirthCgroup birth;
  // The old start on request, to measure one beside the other on the same host (docs/kernels.md). It weakens
  // nothing: the limits are the same, only init is moved into them.
  if (const char* off = std::getenv("OISHELL_CLONE_INTO_CGROUP"); off && std::string_view(off) == "0") {
    birth.why_not = "OISHELL_CLONE_INTO_CGROUP=0";
    return birth;
  }
  auto parent = cgroup::find_v2_parent(own, birth_controllers());
  if (!parent.is_ok()) {
    birth.why_not = "cgroup v2: " + parent.status().message();
    return birth;
  }
  if (Status enabled = cgroup::enable_controllers(*parent); !enabled.is_ok()) {
    birth.why_not = "cgroup v2: " + enabled.message();
    return birth;
  }
  const std::string name = cgroup::sandbox_group_name();
  const std::string path = parent->dir + "/" + name;
  // Known to the janitor before it exists: a supervisor killed from here on leaves no group behind.
  if (Status watched = birth.janitor.watch(-1, path); !watched.is_ok()) {
    birth.why_not = "cgroup v2: " + watched.message();
    return birth;
  }
  auto group = cgroup::OwnedCgroup::create(parent->dir, name, own.ops());
  if (!group.is_ok()) {
    birth.why_not = "cgroup v2: " + group.status().message();
    birth.janitor.release();
    return birth;
  }
  birth.dir.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!birth.dir) {
    // The group stays: ResourceLimits takes it and init is moved into it.
    birth.why_not = Status::from_errno(errno, "open(\"" + path + "\", O_DIRECTORY)").message();
  }
  birth.group = std::move(group.value());
  return birth;
}

std::string init_start_note(bool born, const std::string& dir, const std::string& why_not) {
  if (born) return "init born in its cgroup " + dir + " (clone3 CLONE_INTO_CGROUP, no migration)";
  return "init cloned, then moved into its cgroups: " + why_not;
}

}  // namespace oishell
