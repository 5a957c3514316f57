#pragma once
// `oishell doctor`'s judgement: for each feature of a compiled policy, what this kernel makes of it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/guarantees.h"
#include "policy/sandbox_spec.h"
#include "runtime/outside/kernel_probe.h"

namespace oishell::cli {

enum class Verdict { enforced, degraded, unavailable };

struct FeatureVerdict {
  std::string name;      // "landlock.filesystem", "limits.memory", ...
  Verdict verdict = Verdict::enforced;
  std::string how;       // one sentence: the mechanism, or what is lost
  bool security = true;  // false for resource limits: reported, but not part of "enforced in full"
};

const char* verdict_name(Verdict v);

// `limit_mechanisms` is ResourceLimits::mechanisms() for spec.limits on this machine; `layers` the Landlock ABI
// in use (capped by OISHELL_LANDLOCK_ABI) and seccomp.
std::vector<FeatureVerdict> assess(const KernelFacts& k, const LayerFacts& layers, const SandboxSpec& spec,
                                   const std::vector<std::string>& limit_mechanisms);

// True when every security feature is enforced.
bool enforced_in_full(const std::vector<FeatureVerdict>& verdicts);

nlohmann::json kernel_facts_json(const KernelFacts& k);

// What makes a sandbox slow to start here, and the host setting that fixes it; "" when nothing does. Today: init
// moved into its cgroups (`limit_mechanisms` name one) without favordynmods, whose first move after an idle moment
// waits for an RCU grace period (docs/performance.md). `init_born`: init is born in its cgroup v2 group (clone3
// CLONE_INTO_CGROUP, runtime/outside/cgroup_birth.h), so only cgroup v1 groups would move it.
std::string startup_advice(const KernelFacts& k, const std::vector<std::string>& limit_mechanisms,
                           bool init_born = false);

}  // namespace oishell::cli
