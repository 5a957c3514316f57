#include "agent/core/feedback.h"

#include <algorithm>

#include "agent/core/json_util.h"
#include "base/terminal_text.h"

namespace oishell::agent {

void OutputTail::add(std::string_view data) {
  total_ += data.size();
  tail_.append(data);
  size_t cap = std::max<size_t>(keep_ * 2, 64 * 1024);
  if (tail_.size() > cap) tail_.erase(0, tail_.size() - keep_);
}

std::string describe_event(const nlohmann::json& e) {
  auto str = [&e](const char* key) -> std::string {
    auto it = e.find(key);
    if (it == e.end() || it->is_null()) return {};
    return escape_for_terminal(it->is_string() ? it->get<std::string>() : dump_json(*it));
  };
  std::string name = str("event");
  if (name == "net.denied" || (!str("host").empty() && name.find("denied") != std::string::npos)) {
    std::string why = str("reason").empty() ? str("rule") : str("reason");
    if (str("protocol") == "dns") {  // the DNS stub refused the name: no port was known yet
      return "the name " + str("host") + " was not resolved: the sandbox's policy does not allow it" +
             (why.empty() ? "" : " (" + why + ")");
    }
    std::string where = str("host") + (str("port").empty() ? "" : ":" + str("port"));
    return "network access to " + where + " was denied by the sandbox" + (why.empty() ? "" : " (" + why + ")");
  }
  if (name == "fs.denied") {  // the supervisor's sentence: which rule decided the path, and what would allow it
    return str("message");
  }
  if (name == "denied") {
    std::string what = str("syscall").empty() ? str("what") : str("syscall");
    if (what.empty()) what = str("path");
    std::string set = str("set");
    std::string detail = str("reason").empty() ? str("message") : str("reason");
    std::string line = "the sandbox denied " + (what.empty() ? std::string("an action") : what);
    if (!set.empty()) line += " (" + set + ")";
    if (!str("errno").empty()) line += ": " + str("errno");
    if (!detail.empty()) line += ": " + detail;
    return line;
  }
  if (name == "limit") {
    return "a sandbox limit was reached: " + str("kind") + (str("reason").empty() ? "" : " (" + str("reason") + ")");
  }
  if (name == "executor_restarted" || name == "executor_exited") {
    std::string lang = str("language");
    std::string why = str("reason");
    return "the " + (lang.empty() ? std::string("language") : lang) +
           " session was restarted" + (why.empty() ? "" : " (" + why + ")") + "; its variables were lost";
  }
  if (name == "ask" || name == "net.ask") {
    return "network access to " + str("host") + (str("port").empty() ? "" : ":" + str("port")) +
           " was refused (the user was not asked or said no)";
  }
  return escape_for_terminal(dump_json(e));
}

const char* const kHostChangeAdvice =
    "[Programs on the user's machine run or obey these files (git hooks and config, direnv, CI, editor settings), "
    "so changing them from the sandbox is reported to the user, who has been shown this. Tell the user what was "
    "changed and why; do not create or change such files again.]";

std::string describe_host_change(const HostChange& c) {
  switch (c.kind) {
    case HostChange::Kind::protected_path:
      return "protected path changed during the run: " + escape_for_terminal(c.path);
    case HostChange::Kind::repository: {
      std::string line = "git repository neutralised: " + escape_for_terminal(c.path);
      if (!c.found.empty()) line += ": " + escape_for_terminal(c.found);
      if (!c.action.empty()) line += "; " + escape_for_terminal(c.action);
      return line;
    }
  }
  return escape_for_terminal(c.path);
}

namespace {

// "host:port" of a network event, "" for others (a DNS refusal has no port yet: not an ask's destination).
std::string net_destination(const nlohmann::json& e) {
  const std::string name = e.value("event", "");
  if (name != "net.denied" && name != "ask" && name != "net.ask") return "";
  if (e.value("protocol", "") == "dns") return "";
  auto host = e.find("host");
  if (host == e.end() || !host->is_string()) return "";
  auto port = e.find("port");
  return host->get<std::string>() + ":" + (port == e.end() ? std::string() : dump_json(*port));
}

constexpr const char* kNetworkAdvice = "; do not try to reach it another way: the user can allow it (`%policy learn`, "
                                       "or a network rule in the sandbox's policy)";

}  // namespace

std::string format_feedback(const OutputTail& output, const ExecResult& result, size_t max_output) {
  std::string text;
  const std::string& tail = output.tail();
  if (output.total() > max_output) {
    std::string cut = tail.size() > max_output ? tail.substr(tail.size() - max_output) : tail;
    text = "[output truncated: showing the last " + std::to_string(max_output) + " of " +
           std::to_string(output.total()) + " characters]\n" + cut;
  } else {
    text = tail;
  }
  if (text.empty()) text = "(no output)";
  if (text.back() != '\n') text.push_back('\n');
  if (result.status == "ok" || result.status == "error") {
    text += "[exit status " + std::to_string(result.exit_code) + "]";
  } else if (result.status == "interrupted") {
    text += "[interrupted by the user (Ctrl-C)]";
  } else if (result.status == "timeout") {
    text += "[stopped: the block ran out of time (the sandbox's wall-time limit)]";
  } else {
    text += "[" + result.status + ", exit status " + std::to_string(result.exit_code) + "]";
  }
  // A destination the user was asked about and refused comes twice: the ask, and the relay's denial that followed
  // it. The model is told once, in one line that says what it may do.
  std::vector<std::string> refused_asks;
  for (const auto& e : result.asks_denied) refused_asks.push_back(net_destination(e));
  std::vector<std::string> told;
  auto asked = [&](const std::string& d) {
    return !d.empty() && std::find(refused_asks.begin(), refused_asks.end(), d) != refused_asks.end();
  };
  for (const auto& e : result.denials) {
    const std::string destination = net_destination(e);
    if (asked(destination)) {
      if (std::find(told.begin(), told.end(), destination) != told.end()) continue;
      told.push_back(destination);
      text += "\n[network access to " + escape_for_terminal(destination) +
              " was refused: the user was asked and said no, or nobody could be asked" + kNetworkAdvice + "]";
    } else {
      text += "\n[" + describe_event(e) + (destination.empty() ? "" : kNetworkAdvice) + "]";
    }
  }
  for (const auto& e : result.limits) text += "\n[" + describe_event(e) + "]";
  for (const auto& e : result.restarts) text += "\n[" + describe_event(e) + "]";
  for (const auto& e : result.asks_denied) {
    const std::string destination = net_destination(e);
    if (std::find(told.begin(), told.end(), destination) != told.end()) continue;
    told.push_back(destination);
    text += "\n[network access to " + escape_for_terminal(destination) +
            " was refused: the user was asked and said no, or nobody could be asked" + kNetworkAdvice + "]";
  }
  for (const auto& c : result.host_changes) {
    text += std::string("\n[sandbox") + (c.between_blocks ? ", since the previous block" : "") + ": " +
            describe_host_change(c) + "]";
  }
  if (!result.host_changes.empty()) text += std::string("\n") + kHostChangeAdvice;
  return text;
}

}  // namespace oishell::agent
