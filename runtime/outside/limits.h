#pragma once
// Resource limits: cgroup v2 where a subtree delegated to this process passes the memory and pids controllers down,
// else cgroup v1 where writable (pids and memory controllers), else rlimits. Always says which mechanism enforced
// what, and why a better one was not available (docs/limits.md).
#include <sys/types.h>

#include <cstdint>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"
#include "runtime/outside/cgroup_fs.h"

namespace oishell {

// One rlimit to lower inside the sandbox (RLIMIT_*; never raised above the current hard limit).
struct RlimitSetting {
  int resource = 0;
  uint64_t soft = 0;
  uint64_t hard = 0;
};

// Inside (init, before exec of any sandboxed process): lowers each limit. Errors name the limit and the value.
Status apply_rlimit_settings(const std::vector<RlimitSetting>& settings);

class ResourceLimits {
 public:
  // Called with each cgroup directory before it is made (CgroupJanitor::watch): from then on something outside
  // this process knows it, so that it cannot outlive a process killed at any moment. An error stops prepare().
  using BeforeMkdir = std::function<Status(const std::string& dir)>;
  // Supervisor side, before the sandbox starts: creates the cgroup(s) it can. Never fails for lack of cgroups:
  // falls back to rlimits and records that in mechanisms(). Fails only when `before_mkdir` does.
  static Result<std::unique_ptr<ResourceLimits>> prepare(const LimitsSpec& spec, const BeforeMkdir& before_mkdir = {});
  // The same with the cgroups given instead of read from /proc/self: tests pass a fake tree (OwnCgroups::parse).
  static Result<std::unique_ptr<ResourceLimits>> prepare(const LimitsSpec& spec, const BeforeMkdir& before_mkdir,
                                                         const cgroup::OwnCgroups& where);
  // A cgroup v2 group made before init was cloned (runtime/outside/cgroup_birth.h), below a parent that passes
  // memory and pids down: the v2 limits are written there instead of in a group of their own. `init_inside`: init
  // was born in it (add_process() does not move it there). Kept, limit-less, when the spec limits neither.
  struct PremadeGroup {
    cgroup::OwnedCgroup group;
    bool init_inside = false;
  };
  static Result<std::unique_ptr<ResourceLimits>> prepare(const LimitsSpec& spec, const BeforeMkdir& before_mkdir,
                                                         const cgroup::OwnCgroups& where, PremadeGroup premade);
  virtual ~ResourceLimits() = default;
  // Supervisor side: puts `pid` (sandbox init, host pid) into the cgroup(s) it was not born in.
  virtual Status add_process(pid_t pid) = 0;
  // The rlimits that cover what cgroups did not (file size, open files, cpu time always; memory/pids when no
  // cgroup took them). Init applies them (it gets them in the `joined` message).
  virtual std::vector<RlimitSetting> rlimits() const = 0;
  Status apply_rlimits() const { return apply_rlimit_settings(rlimits()); }
  // The cgroup directories made for the sandbox (empty when only rlimits are used).
  virtual std::vector<std::string> cgroup_dirs() const = 0;
  // "memory: cgroup v2 /sys/fs/cgroup/.../oishell-7-0 (2 GiB, no swap)", "pids: rlimit RLIMIT_NPROC (512, ...)"
  virtual std::vector<std::string> mechanisms() const = 0;
  // After a process died of SIGKILL: was it the memory limit? Returns "memory limit 2 GiB" or "".
  virtual std::string kill_reason() const = 0;
  // Kills everything left in the cgroup(s) and removes them. Idempotent; the destructor calls it.
  virtual void teardown() = 0;
};

}  // namespace oishell
