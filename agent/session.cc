#include "agent/session.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <cstdlib>
#include <ctime>

#include "agent/acp/acp_server.h"
#include "agent/sandbox/computer_tool.h"
#include "agent/core/conversation.h"
#include "agent/embed/embed_server.h"
#include "agent/sandbox/executor_client.h"
#include "agent/gui/gui_session.h"
#include "agent/host/interrupt.h"
#include "agent/llm/local.h"
#include "agent/llm/provider.h"
#include "agent/llm/transport.h"
#include "agent/llm/key_store.h"
#include "agent/core/loop.h"
#include "agent/config/model_setup.h"
#include "agent/config/paths.h"
#include "agent/sandbox/policy_keep.h"
#include "agent/host/private_file.h"
#include "agent/config/profile_actions.h"
#include "agent/server/oi_server.h"
#include "agent/sandbox/session_workspace.h"
#include "base/terminal_text.h"
#include "base/unique_fd.h"
#include "oishell/build_config.h"

namespace oishell::agent {
namespace {

int exit_code(TurnEnd end) {
  switch (end) {
    case TurnEnd::done:
    case TurnEnd::declined: return 0;
    case TurnEnd::error: return 1;
    case TurnEnd::no_model: return 2;
    case TurnEnd::max_turns: return 3;
    case TurnEnd::budget: return 4;
    case TurnEnd::interrupted: return 130;
  }
  return 1;
}

// --conversations: this agent's and Open Interpreter's saved conversations, newest first; the user picks one.
// nullopt: nothing chosen. A conversation of OI's is resumed into a new file of ours (OI's file is left as it is).
struct Picked {
  std::string path;  // empty: save as a new conversation
  std::vector<Message> messages;
};
std::optional<Picked> pick_conversation(const std::string& ours, const std::string& theirs, Display& d,
                                        UserInput& input) {
  auto list = list_conversations(ours);
  std::vector<bool> is_theirs(list.size(), false);
  if (theirs != ours) {
    for (auto& info : list_conversations(theirs)) {
      list.push_back(std::move(info));
      is_theirs.push_back(true);
    }
  }
  std::vector<size_t> order(list.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return list[a].modified > list[b].modified; });
  if (list.empty()) {
    d.notice(NoticeLevel::info, "No saved conversations in " + ours + " or " + theirs + ".");
    return std::nullopt;
  }
  std::string menu = "Saved conversations (newest first; here: " + ours + ", Open Interpreter's: " + theirs + "):";
  for (size_t i = 0; i < order.size() && i < 30; ++i) {
    menu += "\n  " + std::to_string(i + 1) + ". " + readable_conversation_name(list[order[i]].name) +
            (is_theirs[order[i]] ? "  [Open Interpreter]" : "");
  }
  d.notice(NoticeLevel::info, escape_for_terminal(menu, false));
  bool interrupted = false;
  auto answer = input.read_message("Resume which one? ", &interrupted);
  if (!answer || interrupted) return std::nullopt;
  char* end = nullptr;
  long n = std::strtol(answer->c_str(), &end, 10);
  if (end == answer->c_str() || n < 1 || static_cast<size_t>(n) > std::min<size_t>(order.size(), 30)) {
    d.notice(NoticeLevel::error, "`" + escape_for_terminal(*answer, true) + "` is not one of the numbers listed");
    return std::nullopt;
  }
  size_t chosen = order[static_cast<size_t>(n) - 1];
  size_t skipped = 0;
  auto loaded = load_conversation(list[chosen].path, is_theirs[chosen] ? &skipped : nullptr);
  if (!loaded) {
    d.notice(NoticeLevel::error, escape_for_terminal(loaded.status().message(), true));
    return std::nullopt;
  }
  if (skipped) {
    d.notice(NoticeLevel::warning, std::to_string(skipped) + " message(s) of a kind this agent does not keep were "
                                   "left out.");
  }
  return Picked{is_theirs[chosen] ? std::string() : list[chosen].path, std::move(*loaded)};
}

// `i <words>` as Open Interpreter reads it: the words are the user saying "I <words>", and the model is asked to
// act at once, in one command where it can, knowing the names in the working directory the user may mean.
void apply_i_shortcut(AgentConfig& c) {
  c.prompt = "I " + c.prompt;
  std::string names;
  if (DIR* d = ::opendir(".")) {
    int count = 0;
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (++count > 100) break;
      names += (names.empty() ? "" : ", ") + name;
    }
    ::closedir(d);
  }
  c.custom_instructions += std::string(c.custom_instructions.empty() ? "" : "\n") +
                           "The user typed a quick command: act on it at once, without questions and without "
                           "gathering information first; trust that the user knows what they want and do it in one "
                           "block of code where you can.\nThe names in the working directory, which the user may "
                           "mean: " + (names.empty() ? "(none)" : names);
}

std::string read_all_stdin() {
  std::string text;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

int run_session(const CliOptions& cli) {
  interrupt::install();
  EnvLookup env = process_env();
  if (auto status = run_profile_actions(cli, env, stdout, stderr)) return *status;
  bool first_run = false;
  // As Open Interpreter does (not for an embedding program, which reads no profile); a read-only home is no reason
  // to stop.
  if (!cli.embed) (void)ensure_default_profile(env, &first_run);
  auto config = resolve_config(cli, env);
  if (!config) {
    // (A profile may be a file in the workspace, which sandboxed code can write: its text is quoted escaped.)
    std::fprintf(stderr, "interpreter: %s\n", escape_for_terminal(config.status().message(), true).c_str());
    return 2;
  }
  AgentConfig& c = *config;
  // --acp: stdout carries the protocol only. It moves to a descriptor of its own, and what else this process (or
  // anything it starts) would print there goes to stderr; no question is asked (notices as JSON lines, on stderr).
  UniqueFd protocol_out;
  if (c.acp || c.embed) {
    protocol_out.reset(::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3));
    if (!protocol_out || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
      std::fprintf(stderr, "interpreter %s: cannot set up stdout: %s\n", c.acp ? "--acp" : "--embed",
                   std::strerror(errno));
      return 1;
    }
    c.json = true;
  }
  const char* no_color = std::getenv("NO_COLOR");
  auto display = make_display({c.json, c.plain, !(no_color && *no_color), c.verbose});
  for (const auto& w : c.warnings) display->notice(NoticeLevel::warning, w);
  for (const auto& n : c.notes) display->notice(NoticeLevel::info, n);
  if (cli.invoked_as_i) apply_i_shortcut(c);

  if (c.local) {
    auto found = find_local_server();
    if (!found) {
      display->notice(NoticeLevel::error,
                      "--local: no model server found on this machine (looked for Ollama on 11434, LM Studio on "
                      "1234, llama.cpp on 8080, vLLM on 8000).");
      return 1;
    }
    display->notice(NoticeLevel::info, "--local: found " + found->name + " at " + found->api_base +
                                           (found->model.empty() ? "" : " serving " + found->model));
    if (c.model.api_base.empty()) c.model.api_base = found->api_base;
    if (c.model.model.empty()) c.model.model = found->model.empty() ? "local" : found->model;
    if (c.model.provider.empty()) c.model.provider = "openai";
  }

  // Started where the sandbox would not let code write (the home directory, one containing it, `/`): a fresh
  // workspace for the session, entered (the code's working directory, the page's and the system prompt's follow).
  std::string fresh_workspace;
  if (c.sandbox == "openshell" && !c.kubernetes && !c.acp) {
    if (char cwd[4096]; ::getcwd(cwd, sizeof cwd)) {
      auto ws = choose_session_workspace(env, cwd, std::time(nullptr));
      if (!ws) {
        display->notice(NoticeLevel::error, ws.status().message());
        return 1;
      }
      if (!ws->started_in.empty()) {
        // A policy file named relative to where the agent was started stays that file.
        if (!c.policy.empty() && c.policy[0] != '/' && ::access(c.policy.c_str(), F_OK) == 0) {
          c.policy = ws->started_in + "/" + c.policy;
        }
        if (::chdir(ws->path.c_str()) != 0) {
          display->notice(NoticeLevel::error,
                          Status::from_errno(errno, "chdir(\"" + ws->path + "\")").message());
          return 1;
        }
        ::setenv("PWD", ws->path.c_str(), 1);
        fresh_workspace = ws->path;
        display->notice(NoticeLevel::info, escape_for_terminal(fresh_workspace_notice(*ws), true));
      }
    }
  }

  TerminalInput input(c.json, prompt_history_path(env));
  KeyStore keys(keys_dir(env));
  auto chosen = choose_model(c, env, *display, input, keys);
  if (!chosen) {
    display->notice(NoticeLevel::error, chosen.status().message());
    return 2;
  }
  std::unique_ptr<LlmClient> llm;
  LlmSettings settings;
  if (*chosen) {
    settings = **chosen;
    if (c.harness) settings.harness = std::make_shared<const Harness>(*c.harness);
    if (c.os) {  // the computer tool, on the virtual display the supervisor starts (sup.display below)
      auto size = parse_screen_size(c.os_display);
      if (size) settings.computer = model_screen(size->width, size->height);
    }
    llm = make_client(settings);
  }

  // The profile's `policy:` mapping goes to the supervisor as a private file, removed after the sandbox (declared
  // before the executor, so destroyed after it).
  PrivateFile profile_policy;
  if (c.policy.empty() && !c.policy_text.empty()) {
    auto written = PrivateFile::create("interpreter-policy", "profile-policy.yaml", c.policy_text);
    if (!written) {
      display->notice(NoticeLevel::error, written.status().with_context("writing the profile's policy").message());
      return 1;
    }
    profile_policy = std::move(*written);
  }

  // "Allow always" answers kept for later sessions (agent/sandbox/policy_keep.h), in the workspace policy that a session
  // started without a policy of its own uses, while it is what the agent wrote there.
  if (char cwd[4096]; ::getcwd(cwd, sizeof cwd)) c.keep.workspace = cwd;
  {
    auto history = prompt_history_path(env);
    c.keep.state_dir = history.substr(0, history.rfind('/'));
    auto config_home = env("XDG_CONFIG_HOME");
    bool absolute = config_home && !config_home->empty() && config_home->front() == '/';
    c.keep.config_dir = (absolute ? *config_home : home_dir(env) + "/.config") + "/oishell";
  }
  if (c.policy.empty() && c.policy_text.empty() && c.sandbox == "openshell" && !c.kubernetes &&
      !c.keep.workspace.empty()) {
    auto trusted = trusted_workspace_policy(c.keep);
    if (!trusted) {
      display->notice(NoticeLevel::warning, escape_for_terminal(trusted.status().message()));
    } else if (*trusted) {
      c.policy = **trusted;
      display->notice(NoticeLevel::info, "policy: " + escape_for_terminal(c.policy) +
                                             " (this workspace's: the destinations you allowed always)");
    }
  }
  c.keep.session_policy = c.policy;
  c.keep.policy_from_profile = !profile_policy.path().empty();

  SupervisorOptions sup;
  sup.sandbox = c.sandbox;
  if (c.os) sup.display = c.os_display;
  sup.kubernetes = c.kubernetes;
  sup.workspace = fresh_workspace;
  sup.policy = profile_policy.path().empty() ? c.policy : profile_policy.path();
  if (!profile_policy.path().empty()) sup.policy_label = "the policy in profile " + c.profile_path;
  // Every provider's key variables, the key in use and every saved key: none reaches the sandbox.
  for (const auto& row : provider_table()) {
    for (auto v : row.key_variables) sup.secret_variables.emplace_back(v);
  }
  if (!settings.key_variable.empty()) sup.secret_variables.push_back(settings.key_variable);
  if (!settings.api_key.empty()) sup.secret_values.push_back(settings.api_key);
  for (auto& k : keys.all()) sup.secret_values.push_back(std::move(k));
  // Profiles (which may carry llm.api_key), saved keys, conversations and the prompt history stay out of sight
  // even under a policy that shows the home directory. Not when the workspace is inside one (the policy would
  // refuse): then the user is told.
  if (char cwd[4096]; ::getcwd(cwd, sizeof cwd)) {
    const std::string workspace = cwd;
    for (const auto& dir : agent_private_dirs(env)) {
      if (workspace == dir || workspace.starts_with(dir + "/")) {
        display->notice(NoticeLevel::warning, "The workspace is inside " + escape_for_terminal(dir, true) +
                                                  ": the agent's files there (profiles, saved keys, conversations) "
                                                  "are visible to the code it runs.");
        continue;
      }
      sup.hidden_paths.push_back(dir);
    }
  }
  SupervisorClient executor(sup);
  if (c.server) return server::run_server({c, llm ? std::optional(settings) : std::nullopt, &executor, env});
  if (c.acp) {
    return acp::run_acp({c, llm ? std::optional(settings) : std::nullopt, &executor, env, STDIN_FILENO,
                         protocol_out.get()});
  }
  if (c.embed) return embed::run_embed({c, env, &keys, &executor, STDIN_FILENO, protocol_out.get()});
  executor.prestart();

  ConversationStore store(conversations_dir(env));
  AgentParts parts;
  if (c.conversations) {
    auto picked = pick_conversation(store.dir(), oi_conversations_dir(env), *display, input);
    if (!picked) return 1;
    if (!picked->path.empty()) store.attach(picked->path);
    parts.history = std::move(picked->messages);
    display->notice(NoticeLevel::info, "Resumed " + (picked->path.empty() ? "an Open Interpreter conversation" :
                                                     picked->path) + " (" + std::to_string(parts.history.size()) +
                                           " messages).");
  }
  // --gui: the page shows what the terminal shows, and either drives the session.
  std::unique_ptr<gui::GuiSession> gui;
  if (c.gui) {
    char cwd[4096];
    const std::string workspace = ::getcwd(cwd, sizeof cwd) ? cwd : "";
    auto started = gui::GuiSession::start({c.gui_port, workspace, store.dir(), /*open_browser=*/true}, *display, input);
    if (!started) {
      display->notice(NoticeLevel::error, started.status().message());
      return 1;
    }
    gui = std::move(*started);
    display->notice(NoticeLevel::info, std::string(gui->opened() ? "The session's page (opened in your browser): "
                                                                 : "The session's page: ") +
                                           gui->url());
    if (!parts.history.empty()) gui->display().conversation_loaded(parts.history);
  }
  parts.config = c;
  parts.llm = std::move(llm);
  parts.executor = &executor;
  parts.display = gui ? &gui->display() : display.get();
  parts.input = gui ? static_cast<UserInput*>(&gui->input()) : &input;
  parts.store = &store;
  Agent agent(std::move(parts));
  if (gui) {
    gui->input().set_status_source([&agent, &executor] {
      nlohmann::json status = {{"sandbox", executor.description()}, {"auto_run", agent.config().auto_run}};
      if (LlmClient* llm = agent.llm()) {
        status["model"] = llm->settings().model + " (" + api_display_name(llm->settings()) + ")";
      } else {
        status["model"] = "no model";
      }
      if (executor.start().is_ok()) status["policy"] = executor.policy_summary();
      return status;
    });
  }

  if (c.sandbox == "none") {
    display->notice(NoticeLevel::warning, "--sandbox none: code runs on this host, as you, with no confinement." +
                                              std::string(c.auto_run ? "" : " Every block asks first."));
  }
  int status = 0;
  if (c.prompt_then_chat && !c.stdin_prompt) {  // OI's `i <words>`: the words open an interactive chat
    if (!agent.llm()) {
      agent.show_no_model_help();
      status = 2;
    } else {
      agent.respond(c.prompt);
      status = agent.chat();
    }
  } else if (!c.prompt.empty() || c.stdin_prompt) {
    std::string prompt = c.prompt;
    if (c.stdin_prompt) {
      std::string piped = read_all_stdin();
      prompt = prompt.empty() ? piped : prompt + "\n\n" + piped;
    }
    if (!agent.llm()) {
      agent.show_no_model_help();
      status = 2;
    } else {
      status = exit_code(agent.respond(prompt));
    }
  } else {
    if (display->interactive()) {
      std::string model = agent.llm() ? agent.llm()->settings().model + " (" +
                                            api_display_name(agent.llm()->settings()) + ")"
                                      : "no model";
      display->notice(NoticeLevel::info, std::string("interpreter ") + build::kVersion + " · " + model + " · " +
                                             executor.description() + " · auto_run " +
                                             (c.auto_run ? "on" : "off") +
                                             "\n%help lists commands · Ctrl-C stops a block · Ctrl-D quits");
    }
    if (!agent.llm()) agent.show_no_model_help();
    status = agent.chat();
  }
  agent.end_session();
  return status;
}

}  // namespace oishell::agent
