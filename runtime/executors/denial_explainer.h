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
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/sandbox_spec.h"
#include "runtime/outside/repeat_window.h"

namespace oishell::executors {

class DenialExplainer {
 public:
  static constexpr std::chrono::seconds kWindow{30};

  explicit DenialExplainer(SandboxSpec spec) : spec_(std::move(spec)) {}

  // The events for what block `id`'s output (its last bytes) names.
  std::vector<nlohmann::json> explain(std::string_view id, std::string_view output);

 private:
  SandboxSpec spec_;
  RepeatWindow<int> reported_{kWindow};
};

}  // namespace oishell::executors
