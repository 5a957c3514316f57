#include "agent/magic.h"

#include <nlohmann/json.hpp>

#include "agent/atomic_file.h"
#include "agent/context.h"
#include "agent/json_util.h"
#include "agent/llm/transport.h"
#include "agent/loop.h"
#include "agent/magic_tokens.h"

namespace oishell::agent {
namespace {

constexpr const char* kHelp =
    "%% <command>          run a shell command in the sandbox\n"
    "%reset                start a new conversation (and fresh language sessions)\n"
    "%undo                 remove your last message and the answer to it\n"
    "%save_message [path]  save the messages to a JSON file (default messages.json)\n"
    "%load_message [path]  load messages from a JSON file (default messages.json)\n"
    "%auto_run [on|off]    run code without asking (toggles without an argument)\n"
    "%verbose [on|off]     show more detail (toggles without an argument)\n"
    "%tokens               estimate the tokens the next request will use\n"
    "%info                 model, sandbox and session details\n"
    "%policy               what the sandbox allows\n"
    "%help                 this list";

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

bool toggle(const std::string& arg, bool current) {
  if (arg == "on" || arg == "true" || arg == "1") return true;
  if (arg == "off" || arg == "false" || arg == "0") return false;
  return !current;
}

}  // namespace

void handle_magic(Agent& agent, const std::string& line) {
  Display& d = agent.display();
  if (line.rfind("%%", 0) == 0) {
    std::string cmd = trim(line.substr(2));
    if (cmd.empty()) {
      d.notice(NoticeLevel::info, "usage: %% <shell command>");
      return;
    }
    bool stop = false;
    agent.run_block("shell", cmd, "", &stop);
    return;
  }
  std::string rest = trim(line.substr(1));
  std::string cmd = rest.substr(0, rest.find(' '));
  std::string arg = rest.size() > cmd.size() ? trim(rest.substr(cmd.size())) : "";
  if (cmd == "reset") {
    agent.messages().clear();
    if (agent.store()) *agent.store() = ConversationStore(agent.store()->dir());
    for (const auto& l : agent.languages()) (void)agent.executor().reset(l);
    d.notice(NoticeLevel::info, "Reset: a new conversation.");
  } else if (cmd == "undo") {
    auto& m = agent.messages();
    size_t last_user = m.size();
    for (size_t i = m.size(); i > 0; --i) {
      if (m[i - 1].role == "user") {
        last_user = i - 1;
        break;
      }
    }
    if (last_user == m.size()) {
      d.notice(NoticeLevel::info, "Nothing to undo.");
      return;
    }
    size_t removed = m.size() - last_user;
    m.erase(m.begin() + static_cast<std::ptrdiff_t>(last_user), m.end());
    agent.save();
    d.notice(NoticeLevel::info, "Removed the last " + std::to_string(removed) + " messages.");
  } else if (cmd == "save_message") {
    std::string path = arg.empty() ? "messages.json" : arg;
    nlohmann::json list = nlohmann::json::array();
    for (const auto& m : agent.messages()) list.push_back(to_json(m));
    Status s = write_file_atomic(path, dump_json(list, 2) + "\n", 0600);
    d.notice(s.is_ok() ? NoticeLevel::info : NoticeLevel::error,
             s.is_ok() ? "Saved " + std::to_string(agent.messages().size()) + " messages to " + path : s.message());
  } else if (cmd == "load_message") {
    std::string path = arg.empty() ? "messages.json" : arg;
    auto loaded = load_conversation(path);
    if (!loaded) {
      d.notice(NoticeLevel::error, loaded.status().message());
      return;
    }
    agent.messages() = std::move(*loaded);
    agent.save();
    d.notice(NoticeLevel::info, "Loaded " + std::to_string(agent.messages().size()) + " messages from " + path);
  } else if (cmd == "auto_run") {
    agent.config().auto_run = toggle(arg, agent.config().auto_run);
    d.notice(NoticeLevel::info, std::string("auto_run is ") + (agent.config().auto_run ? "on" : "off"));
  } else if (cmd == "verbose") {
    agent.config().verbose = toggle(arg, agent.config().verbose);
    d.notice(NoticeLevel::info, std::string("verbose is ") + (agent.config().verbose ? "on" : "off"));
  } else if (cmd == "tokens") {
    show_tokens(agent, arg);
  } else if (cmd == "info") {
    std::string text;
    if (LlmClient* llm = agent.llm()) {
      const LlmSettings& s = llm->settings();
      text += "model: " + s.model + " (" + provider_display_name(s.provider) + " at " + s.api_base + ")\n";
      text += "API key: " + (s.api_key.empty() ? std::string("none") : "from " + s.key_source) + "\n";
      text += std::string("tools: ") + (s.supports_functions ? "execute()" : "fenced code blocks") + "\n";
    } else {
      text += "model: none configured\n";
    }
    text += "sandbox: " + agent.executor().description() + "\n";
    std::string langs;
    for (const auto& l : agent.languages()) langs += (langs.empty() ? "" : ", ") + l;
    text += "languages: " + langs + "\n";
    text += std::string("auto_run: ") + (agent.config().auto_run ? "on" : "off") + "\n";
    text += "max_output: " + std::to_string(agent.config().max_output) + "\n";
    text += "messages: " + std::to_string(agent.messages().size()) + "\n";
    if (agent.store() && !agent.store()->path().empty()) text += "conversation: " + agent.store()->path() + "\n";
    if (!agent.config().profile_path.empty()) text += "profile: " + agent.config().profile_path + "\n";
    text.pop_back();
    d.notice(NoticeLevel::info, text);
  } else if (cmd == "policy") {
    Status s = agent.executor().start();
    if (!s.is_ok()) {
      d.notice(NoticeLevel::error, s.message());
      return;
    }
    std::string summary = agent.executor().policy_summary();
    d.notice(NoticeLevel::info, agent.executor().description() +
                                    (summary.empty() ? "" : "\n" + summary));
  } else {
    if (cmd != "help") d.notice(NoticeLevel::warning, "unknown command %" + cmd);
    d.notice(NoticeLevel::info, kHelp);
  }
}

}  // namespace oishell::agent
