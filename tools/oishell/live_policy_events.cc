// See live_policy_events.h.
#include "tools/oishell/live_policy_events.h"

#include <string>

namespace oishell::cli {
namespace {

nlohmann::json lines_of(const std::string& message) {
  nlohmann::json out = nlohmann::json::array();
  size_t start = 0;
  while (start <= message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    if (end > start) out.push_back(message.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

nlohmann::json rejected(std::string_view source, std::string_view ref, const std::string& message) {
  nlohmann::json event = {{"event", "policy.rejected"},
                          {"source", source},
                          {"errors", lines_of(message)},
                          {"kept", "the policy in force is unchanged"}};
  if (!ref.empty()) event["ref"] = ref;
  return event;
}

}  // namespace

nlohmann::json apply_live_change(policy::LivePolicy& live, Sandbox& sandbox,
                                 Result<policy::LiveNetworkChange> proposed, std::string_view source,
                                 std::string_view ref) {
  if (!proposed) return rejected(source, ref, proposed.status().message());
  auto update = sandbox.update_network(proposed->network);
  if (!update) return rejected(source, ref, update.status().message());
  live.commit();
  nlohmann::json event = {{"event", "policy.changed"},
                          {"source", source},
                          {"widened", proposed->widened},
                          {"narrowed", proposed->narrowed},
                          {"closed_connections", update->closed_connections},
                          {"ended_associations", update->ended_associations},
                          {"applied_us", update->applied_us},
                          {"work_us", update->work_us}};
  if (!ref.empty()) event["ref"] = ref;
  return event;
}

nlohmann::json answer_policy_request(policy::LivePolicy& live, Sandbox& sandbox,
                                     const executors::PolicyRequest& request) {
  Result<policy::LiveNetworkChange> proposed = Status::error("policy: nothing to change");
  if (request.reload) {
    if (live.file().empty()) {
      return rejected("request", request.ref,
                      "policy: `reload` reads the policy file again, and this session's policy is a built-in profile");
    }
    proposed = live.propose_reload();
  } else if (request.network) {
    proposed = live.propose_network(*request.network);
  } else {
    policy::NetworkPatch patch;
    patch.allow = request.allow;
    patch.deny = request.deny;
    patch.remove = request.remove;
    patch.on_unlisted = request.on_unlisted;
    proposed = live.propose_patch(patch);
  }
  return apply_live_change(live, sandbox, std::move(proposed), request.reload ? "file" : "request", request.ref);
}

}  // namespace oishell::cli
