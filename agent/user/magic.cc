#include "agent/user/magic.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>

#include <nlohmann/json.hpp>

#include "agent/host/atomic_file.h"
#include "agent/core/context.h"
#include "agent/core/json_util.h"
#include "agent/llm/transport.h"
#include "agent/core/loop.h"
#include "agent/user/magic_export.h"
#include "agent/user/magic_tokens.h"
#include "agent/sandbox/policy_learn.h"

namespace oishell::agent {
namespace {

constexpr const char* kHelp =
    "%% <command>          run a shell command in the sandbox\n"
    "%reset                start a new conversation (and fresh language sessions)\n"
    "%undo                 remove your last message and the answer to it\n"
    "%save_message [path]  save the messages to a JSON file (default messages.json; .json added when missing)\n"
    "%load_message [path]  load messages from a JSON file (default messages.json; .json added when missing)\n"
    "%resume [N|name]      list the saved conversations, or continue one (saved on in its own file)\n"
    "%jupyter [path]       write the conversation as a Jupyter notebook (default: open-interpreter-<time>.ipynb\n"
    "                      in the working directory)\n"
    "%markdown [path]      write the conversation as Markdown (default: <conversation>.md in the working directory)\n"
    "%auto_run [on|off]    run code without asking (on without an argument)\n"
    "%verbose [on|off]     show more detail (on without an argument)\n"
    "%debug [on|off]       OI's developer mode (here: verbose; on without an argument)\n"
    "%tokens [prompt]      the conversation's tokens (and a prompt's), the next call's and the session's cost\n"
    "%info                 model, sandbox and session details\n"
    "%policy               what the sandbox allows\n"
    "%policy learn         propose the rules this session's denials point to; apply them live (no restart)\n"
    "%policy allow HOST[:PORT]  allow a destination in the running sandbox (no restart; this session only)\n"
    "%policy deny HOST[:PORT]   deny a destination in the running sandbox; open connections to it are closed\n"
    "%help                 this list";

std::string trim(std::string s);

// %policy learn: what this session's denials point to; applied to the running sandbox on a yes (no restart).
void learn_policy(Agent& agent) {
  Display& d = agent.display();
  PolicyProposal p = propose_policy_rules(agent.session_denials());
  std::string text;
  if (p.lines.empty()) {
    text = "No denial of this session points to a rule to add.";
  } else {
    text = "The denials of this session point to:";
    for (const auto& l : p.lines) text += "\n  " + l;
  }
  if (!p.not_proposed.empty()) {
    text += "\nNot proposed:";
    for (const auto& l : p.not_proposed) text += "\n  " + l;
  }
  text += "\n(A file the policy does not show fails without a report: `oishell learn -- CMD` finds those.)";
  d.notice(NoticeLevel::info, text);
  if (p.lines.empty()) return;
  std::string yaml = "To keep them, add to your policy file:\nnetwork:\n  allow:";
  for (const auto& l : p.yaml) yaml += "\n" + l;
  bool interrupted = false;
  std::optional<std::string> answer;
  if (agent.input().can_ask()) {
    d.before_question();  // the terminal as the user left it, and the agent's mark before the question
    answer = agent.input().ask("Apply them for this session? To the running sandbox: no restart, the executors keep "
                               "their state. [y/N] ", &interrupted);
  }
  if (!answer || interrupted || (trim(*answer) != "y" && trim(*answer) != "yes")) {
    d.notice(NoticeLevel::info, "Not applied. " + yaml);
    return;
  }
  if (!agent.change_policy({{"allow", p.allow}})) return;  // it said why
  agent.forget_session_denials();
  d.notice(NoticeLevel::info, yaml);
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

// OI's switches: no argument (or true) turns it on, false turns it off. nullopt: an argument it does not know.
std::optional<bool> switch_value(const std::string& arg) {
  if (arg.empty() || arg == "on" || arg == "true" || arg == "1") return true;
  if (arg == "off" || arg == "false" || arg == "0") return false;
  return std::nullopt;
}

// Sets *setting from `%name [arg]` and says what it is now.
bool set_switch(Display& d, const std::string& name, const std::string& arg, bool* setting) {
  auto value = switch_value(arg);
  if (!value) {
    d.notice(NoticeLevel::error, "%" + name + ": `" + arg + "` is not on, off, true or false");
    return false;
  }
  *setting = *value;
  d.notice(NoticeLevel::info, name + " is " + (*value ? "on" : "off"));
  return true;
}

std::string with_json_extension(const std::string& path) {
  return path.ends_with(".json") ? path : path + ".json";
}

// A name in the working directory that is not taken yet: open-interpreter-12-01-26-1105PM.ipynb (OI's pattern).
std::string fresh_name(const std::string& stem, const std::string& ext) {
  std::time_t now = std::time(nullptr);
  std::tm tm {};
  ::localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%m-%d-%y-%I%M%p", &tm);
  std::string base = stem + "-" + stamp;
  struct stat st {};
  std::string name = base + ext;
  for (int i = 2; ::lstat(name.c_str(), &st) == 0; ++i) name = base + "-" + std::to_string(i) + ext;
  return name;
}

void write_export(Display& d, const std::string& path, const std::string& text, const std::string& what) {
  Status s = write_file_atomic(path, text, 0644);
  d.notice(s.is_ok() ? NoticeLevel::info : NoticeLevel::error, s.is_ok() ? what + " written to " + path : s.message());
}

// %resume: without an argument the saved conversations, newest first, numbered; with a number or a name, that one
// continues here (this session's messages are replaced; it is saved on in its own file).
void resume_conversation(Agent& agent, const std::string& arg) {
  Display& d = agent.display();
  if (!agent.store()) {
    d.notice(NoticeLevel::error, "%resume: this session does not save conversations");
    return;
  }
  const auto list = list_conversations(agent.store()->dir());
  if (list.empty()) {
    d.notice(NoticeLevel::info, "No saved conversations in " + agent.store()->dir() + ".");
    return;
  }
  if (arg.empty()) {
    std::string menu = "Saved conversations (newest first; `%resume N` continues one):";
    for (size_t i = 0; i < list.size() && i < 30; ++i) {
      menu += "\n  " + std::to_string(i + 1) + ". " + readable_conversation_name(list[i].name);
    }
    d.notice(NoticeLevel::info, menu);
    return;
  }
  const ConversationInfo* chosen = nullptr;
  char* end = nullptr;
  long n = std::strtol(arg.c_str(), &end, 10);
  if (end != arg.c_str() && *end == '\0') {
    if (n >= 1 && static_cast<size_t>(n) <= std::min<size_t>(list.size(), 30)) chosen = &list[static_cast<size_t>(n) - 1];
  } else {
    for (const auto& info : list) {
      if (info.name == arg || info.name + ".json" == arg) chosen = &info;
    }
  }
  if (!chosen) {
    d.notice(NoticeLevel::error, "%resume: `" + arg + "` is not one of the saved conversations (`%resume` lists them)");
    return;
  }
  auto loaded = load_conversation(chosen->path);
  if (!loaded) {
    d.notice(NoticeLevel::error, loaded.status().message());
    return;
  }
  agent.store()->attach(chosen->path);
  agent.messages() = std::move(*loaded);
  d.conversation_loaded(agent.messages());
  d.notice(NoticeLevel::info, "Resumed " + readable_conversation_name(chosen->name) + " (" +
                                  std::to_string(agent.messages().size()) + " messages).");
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
    std::string path = with_json_extension(arg.empty() ? "messages" : arg);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& m : agent.messages()) list.push_back(to_json(m));
    Status s = write_file_atomic(path, dump_json(list, 2) + "\n", 0600);
    d.notice(s.is_ok() ? NoticeLevel::info : NoticeLevel::error,
             s.is_ok() ? "Saved " + std::to_string(agent.messages().size()) + " messages to " + path : s.message());
  } else if (cmd == "load_message") {
    std::string path = with_json_extension(arg.empty() ? "messages" : arg);
    auto loaded = load_conversation(path);
    if (!loaded) {
      d.notice(NoticeLevel::error, loaded.status().message());
      return;
    }
    agent.messages() = std::move(*loaded);
    agent.save();
    d.notice(NoticeLevel::info, "Loaded " + std::to_string(agent.messages().size()) + " messages from " + path);
  } else if (cmd == "resume") {
    resume_conversation(agent, arg);
  } else if (cmd == "auto_run") {
    (void)set_switch(d, "auto_run", arg, &agent.config().auto_run);
  } else if (cmd == "verbose") {
    (void)set_switch(d, "verbose", arg, &agent.config().verbose);
  } else if (cmd == "debug") {
    if (set_switch(d, "debug", arg, &agent.config().debug)) agent.config().verbose = agent.config().debug;
  } else if (cmd == "jupyter") {
    if (agent.messages().empty()) {
      d.notice(NoticeLevel::info, "No messages to export.");
      return;
    }
    std::string path = arg.empty() ? fresh_name("open-interpreter", ".ipynb") : arg;
    write_export(d, path, dump_json(notebook_from_messages(agent.messages()), 1) + "\n", "Jupyter notebook");
  } else if (cmd == "markdown") {
    if (agent.messages().empty()) {
      d.notice(NoticeLevel::info, "No messages to export.");
      return;
    }
    std::string path = arg;
    if (path.empty() && agent.store() && !agent.store()->path().empty()) {
      std::string name = agent.store()->path().substr(agent.store()->path().rfind('/') + 1);
      if (name.ends_with(".json")) name.resize(name.size() - 5);
      path = name + ".md";
    }
    if (path.empty()) path = fresh_name("open-interpreter", ".md");
    write_export(d, path, markdown_from_messages(agent.messages()) + "\n", "Markdown transcript");
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
    if (char cwd[4096]; ::getcwd(cwd, sizeof cwd)) text += std::string("workspace: ") + cwd + "\n";
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
  } else if (cmd == "policy" && trim(arg) == "learn") {
    learn_policy(agent);
  } else if (cmd == "policy" && (trim(arg).starts_with("allow") || trim(arg).starts_with("deny"))) {
    // %policy allow|deny HOST[:PORT]: one rule, applied to the running sandbox (docs/protocol.md, `policy`).
    const std::string rest = trim(arg);
    const bool allow = rest.starts_with("allow");
    const std::string target = trim(rest.substr(allow ? 5 : 4));
    if (target.empty() || target.find_first_of(" \t") != std::string::npos ||
        (rest.size() > (allow ? 5u : 4u) && !std::isspace(static_cast<unsigned char>(rest[allow ? 5 : 4])))) {
      d.notice(NoticeLevel::warning, "usage: %policy allow HOST[:PORT]  or  %policy deny HOST[:PORT]");
      return;
    }
    agent.change_policy({{allow ? "allow" : "deny", nlohmann::json::array({target})}});
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
