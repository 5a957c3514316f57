#pragma once
// Landlock: filesystem, TCP and scope rules at the highest ABI the kernel offers.
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"

namespace oishell {

// The kernel's Landlock ABI version; 0 when Landlock is unavailable or disabled.
int landlock_abi_version();

struct LandlockReport {
  int abi = 0;
  std::vector<std::string> degraded;  // "truncate not enforced (ABI 2)", ...
  std::vector<std::string> skipped;   // rule paths that did not exist (no rule added: stricter, not weaker)
};

// What a ruleset at Landlock `abi` handles for `spec` (pure: no syscall). Rights newer than `abi` are left out and,
// with spec.required, are an error naming the right and the ABI; otherwise they are sentences in report->degraded.
// landlock_apply() calls it with the kernel's ABI; tests call it with older ones.
struct LandlockHandled {
  uint64_t fs = 0;
  uint64_t net = 0;
  uint64_t scoped = 0;
};
Result<LandlockHandled> landlock_negotiate(const LandlockSpec& spec, int abi, LandlockReport* report);

// Builds the ruleset from `spec` (paths are as seen by the caller, i.e. after pivot_root) and restricts the
// calling thread. Requires no_new_privs or CAP_SYS_ADMIN. With spec.required, any right the kernel cannot enforce
// is an error; otherwise it is listed in report->degraded.
Status landlock_apply(const LandlockSpec& spec, LandlockReport* report);

}  // namespace oishell
