// SupervisorClient (executor_client.h) and the sandbox's policy: its summary in words for the model and %policy
// (from `ready`, or `oishell explain`), a live change sent as a `policy` request and answered by its ref, and the
// session's accepted changes sent again after the supervisor restarts (refused: the session stops rather than run
// under another policy than the one the user set).
#include <chrono>

#include "agent/core/json_util.h"
#include "agent/host/subprocess.h"
#include "agent/sandbox/executor_client.h"
#include "agent/sandbox/policy_describe.h"

namespace oishell::agent {

using nlohmann::json;

Status SupervisorClient::replay_live_changes() {
  for (const json& change : live_changes_) {
    auto answer = send_policy(change, nullptr, nullptr);  // nothing runs yet: other events say nothing
    if (!answer) {
      return answer.status().with_context("the sandbox was started again and did not take this session's policy "
                                          "changes again: nothing runs under another policy than the one you set");
    }
    if (answer->value("event", "") == "policy.rejected") {
      std::string errors;
      for (const auto& e : answer->value("errors", json::array())) {
        if (e.is_string()) errors += "\n  " + e.get<std::string>();
      }
      return Status::error("the sandbox was started again and refused this session's policy change " +
                           dump_json(change) + ": nothing runs under another policy than the one you set:" + errors);
    }
  }
  return Status::ok();
}

Result<json> SupervisorClient::send_policy(const json& request, ExecObserver* observer, ExecResult* reports) {
  json sent = request;
  const std::string ref = "agent-" + std::to_string(next_id_++);
  sent["op"] = "policy";
  sent["ref"] = ref;
  OI_TRY(send(sent));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status::error("the sandbox did not answer the policy change within 30 s");
    auto ev = next_event(static_cast<int>(left.count()));
    if (!ev) return ev.status();
    if (ev->is_null()) continue;
    const std::string name = ev->value("event", "");
    if ((name == "policy.changed" || name == "policy.rejected") && ev->value("ref", "") == ref) {
      if (name == "policy.changed" && ev->contains("policy")) {
        ready_event_["policy"] = (*ev)["policy"];  // what the model and %policy are told from now on
        policy_summary_ = load_policy_summary();
      }
      return *ev;
    }
    if (observer && !handle_event(*ev, "", *observer, reports)) {
      return Status::error("the sandbox went away while its policy changed");
    }
  }
}

std::string SupervisorClient::load_policy_summary() {
  for (const char* key : {"policy_summary", "summary", "policy"}) {
    auto it = ready_event_.find(key);
    if (it == ready_event_.end()) continue;
    if (it->is_string() && !it->get<std::string>().empty()) return it->get<std::string>();
    if (it->is_object() && !it->empty()) {
      std::string text = describe_policy(*it);
      if (auto d = ready_event_.find("degradations"); d != ready_event_.end() && d->is_array()) {
        for (const auto& x : *d) {
          if (x.is_string()) text += "- degraded: " + x.get<std::string>() + "\n";
        }
      }
      return text;
    }
  }
  // `oishell explain` describes the policy in words.
  std::vector<std::string> argv = command_line();
  std::vector<std::string> explain = {argv[0], "explain"};
  if (argv.size() > 4) explain.insert(explain.end(), argv.begin() + 4, argv.end());
  auto out = run_capture(explain, 5000);
  if (out && out->exit_code == 0 && !out->output.empty()) {
    std::string text = out->output;
    if (text.size() > 3000) text = text.substr(0, 3000) + "\n[...]";
    return text;
  }
  return {};
}

Result<json> SupervisorClient::change_policy(const json& request, ExecObserver& observer) {
  OI_TRY(start());
  ExecResult reports;
  auto answer = send_policy(request, &observer, &reports);
  keep_for_next_block(std::move(reports));
  if (answer && answer->value("event", "") == "policy.changed") live_changes_.push_back(request);
  return answer;
}

}  // namespace oishell::agent
