#pragma once
// Landlock: filesystem, TCP and scope rules at the highest ABI the kernel offers.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"

namespace oishell {

// The kernel's Landlock ABI version; 0 when Landlock is unavailable or disabled.
int landlock_abi_version();

// The cap on the Landlock ABI the supervisor asks of the kernel: OISHELL_LANDLOCK_ABI (0-7) in the supervisor's own
// environment, for tests and for reproducing an older kernel. It only ever removes rules. Unset: no cap; set to
// anything but 0..7: an error (never silently ignored). Sandboxed code cannot reach it: the supervisor reads it and
// passes the result in LandlockSpec::abi_limit; init's environment is scrubbed.
Result<std::optional<int>> landlock_abi_cap();

// The ABI a sandbox uses: the kernel's, at most `limit` (-1: no limit).
int landlock_abi_in_use(int kernel_abi, int limit);

struct LandlockReport {
  int abi = 0;         // the ABI in use (landlock_abi_in_use)
  int kernel_abi = 0;  // what the kernel offers
  std::vector<std::string> degraded;  // "truncate not enforced (ABI 2)", ...
  std::vector<std::string> skipped;   // rule paths that did not exist (no rule added: stricter, not weaker)
};

// What a ruleset at Landlock `abi` handles for `spec` (pure: no syscall). Rights newer than `abi` are left out and
// named in report->degraded with the layer that still holds what they would add. Whether the sandbox may start
// without them is the guarantees' question (policy/guarantees.h), asked by the supervisor before init applies this.
// landlock_apply() calls it with the ABI in use; tests call it with older ones.
struct LandlockHandled {
  uint64_t fs = 0;
  uint64_t net = 0;
  uint64_t scoped = 0;
};
Result<LandlockHandled> landlock_negotiate(const LandlockSpec& spec, int abi, LandlockReport* report);

// Builds the ruleset from `spec` (paths are as seen by the caller, i.e. after pivot_root) at the ABI in use
// (the kernel's, at most spec.abi_limit) and restricts the calling thread. Requires no_new_privs or CAP_SYS_ADMIN.
// What the ABI in use cannot enforce is listed in report->degraded.
Status landlock_apply(const LandlockSpec& spec, LandlockReport* report);

}  // namespace oishell
