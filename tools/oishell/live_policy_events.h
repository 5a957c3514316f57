#pragma once
// A live change of a running sandbox's network policy (policy/live_policy.h) carried out and told as an event:
// `policy.changed` (what it widened and narrowed, how many connections and datagram associations it closed, how
// long it took) or `policy.rejected` (every problem; the policy in force is unchanged). Shared by `oishell
// supervise` (the `policy` request) and `oishell run --watch-policy` (the file edited).
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "policy/live_policy.h"
#include "runtime/executors/protocol.h"
#include "runtime/outside/sandbox.h"

namespace oishell::cli {

// Gives the sandbox `proposed`'s network when it is one, and commits it to `live` once in force. `source` says where
// the change came from ("request", "file"); `ref` is echoed when not empty.
nlohmann::json apply_live_change(policy::LivePolicy& live, Sandbox& sandbox,
                                 Result<policy::LiveNetworkChange> proposed, std::string_view source,
                                 std::string_view ref = {});

// A `policy` request of the supervisor protocol, answered.
nlohmann::json answer_policy_request(policy::LivePolicy& live, Sandbox& sandbox,
                                     const executors::PolicyRequest& request);

}  // namespace oishell::cli
