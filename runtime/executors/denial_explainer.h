#pragma once
// The `fs.denied` event: a block failed on a path (runtime/executors/denial_scan.h) and the sandbox's mount plan
// says the sandbox decided that path (policy/path_verdict.h): which layer and rule, and what policy line would allow
// it. Nothing is said about a failure the sandbox did not cause (a missing file in the workspace, a file the user's
// own permissions close). Each path and access is reported once per window: a loop inside must not flood the events
// log (the ones in between are counted on the next report).
//
//   {"event":"fs.denied","id":"b1","path":"/home/u/.ssh/id_rsa","access":"read","errno":"ENOENT",
//    "decision":"hidden","rule":"filesystem.hide","layer":"mounts","message":"/home/u/.ssh/id_rsa is hidden by
//    the policy (filesystem.hide); ...","allow":"...","repeated":0}
#include <chrono>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/compile.h"
#include "policy/policy.h"
#include "policy/sandbox_spec.h"
#include "policy/path_verdict.h"
#include "runtime/outside/repeat_window.h"

namespace oishell::executors {

class DenialExplainer {
 public:
  static constexpr std::chrono::seconds kWindow{30};

  // The spec the sandbox was built from; with the policy it was compiled from, a path the policy hides where the
  // mount plan left nothing to hide (under the empty home) is named as hidden (policy/path_verdict.h
  // hidden_by_policy; never explain_path, whose trial of its advice looks at the host).
  explicit DenialExplainer(SandboxSpec spec) : spec_(std::move(spec)) {}
  void set_policy(policy::Policy policy, CompileContext context) { source_.emplace(std::move(policy), std::move(context)); }

  // The events for what block `id`'s output (its last bytes) names.
  std::vector<nlohmann::json> explain(std::string_view id, std::string_view output);

 private:
  policy::PathVerdict verdict(const std::string& path, policy::PathAccess access) const;

  SandboxSpec spec_;
  std::optional<std::pair<policy::Policy, CompileContext>> source_;
  RepeatWindow<int> reported_{kWindow};
};

}  // namespace oishell::executors
