#include "agent/acp/acp_input.h"

#include "agent/sandbox/policy_keep.h"

namespace oishell::agent::acp {
namespace {

using nlohmann::json;

json option(const char* id, const char* name, const char* kind) {
  return {{"optionId", id}, {"name", name}, {"kind", kind}};
}

constexpr std::string_view kNetworkAsk = "code wants to reach ";  // agent/core/run_block.cc's question

}  // namespace

std::optional<std::string> AcpInput::request(json tool_call, json options) {
  auto answer = channel_.call("session/request_permission",
                              {{"sessionId", session_id_}, {"toolCall", std::move(tool_call)}, {"options", options}});
  if (!answer || !answer->is_object()) return std::nullopt;
  const json outcome = answer->value("outcome", json::object());
  if (!outcome.is_object() || outcome.value("outcome", "") != "selected") return std::nullopt;
  const json chosen = outcome.value("optionId", json());
  if (!chosen.is_string()) return std::nullopt;
  for (const auto& o : options) {
    if (o["optionId"] == chosen) return chosen.get<std::string>();
  }
  return std::nullopt;  // not one we offered: as if cancelled
}

std::optional<std::string> AcpInput::ask(const std::string& question, bool* interrupted) {
  if (interrupted) *interrupted = false;
  if (auto block = display_.take_confirmation()) {
    const json id = (*block)["toolCallId"];
    auto chosen = request(std::move(*block), json::array({option("run", "Run", "allow_once"),
                                                          option("skip", "Skip", "reject_once")}));
    if (chosen && *chosen == "run") return "y";
    // Not run: the editor shows the tool call as ended, not as waiting.
    channel_.notify("session/update",
                    {{"sessionId", session_id_},
                     {"update", {{"sessionUpdate", "tool_call_update"}, {"toolCallId", id}, {"status", "failed"},
                                 {"content", json::array({{{"type", "content"},
                                                           {"content", {{"type", "text"}, {"text", "Not run."}}}}})}}}});
    if (!chosen) {
      if (interrupted) *interrupted = true;
      return std::nullopt;
    }
    return "n";
  }
  if (question.starts_with(kNetworkAsk)) {
    std::string destination = question.substr(kNetworkAsk.size());
    destination = destination.substr(0, destination.find(" \xE2\x80\x94 "));  // up to " — allow (o)nce..."
    json tool_call = display_.running_tool_call();
    if (tool_call.is_null()) tool_call = {{"toolCallId", "ask-" + std::to_string(++asks_)}};
    tool_call["title"] = "Allow the sandbox to connect to " + destination + "?";
    tool_call["kind"] = "fetch";
    auto chosen = request(std::move(tool_call), json::array({option("once", "Allow once", "allow_once"),
                                                             option("always", "Allow always", "allow_always"),
                                                             option("deny", "Deny", "reject_once")}));
    if (!chosen) return "d";  // cancelled or unanswered: denied, the block goes on
    return *chosen == "once" ? "o" : *chosen == "always" ? "a" : "d";
  }
  if (question.find("Apply them for this session?") != std::string::npos) {  // %policy learn's (agent/user/magic.cc)
    json tool_call = {{"toolCallId", "learn-" + std::to_string(++asks_)},
                      {"title", "Apply the rules above to the running sandbox (no restart)?"},
                      {"kind", "other"},
                      {"status", "pending"}};
    auto chosen = request(std::move(tool_call), json::array({option("apply", "Apply", "allow_once"),
                                                             option("skip", "Don't apply", "reject_once")}));
    return chosen && *chosen == "apply" ? "y" : "n";
  }
  if (question == kKeepQuestion) {  // "allow always" kept for later sessions: the file's diff, then write or not
    auto diff = display_.take_proposed_file();
    if (!diff) return std::nullopt;
    json tool_call = {{"toolCallId", "keep-" + std::to_string(++asks_)},
                      {"title", "Keep the rule for later sessions: write " + (*diff)["path"].get<std::string>() + "?"},
                      {"kind", "edit"},
                      {"status", "pending"},
                      {"content", json::array({*diff})},
                      {"locations", json::array({{{"path", (*diff)["path"]}}})}};
    auto chosen = request(std::move(tool_call), json::array({option("write", "Write it", "allow_once"),
                                                             option("skip", "Don't write", "reject_once")}));
    return chosen && *chosen == "write" ? "y" : "n";
  }
  return std::nullopt;
}

}  // namespace oishell::agent::acp
