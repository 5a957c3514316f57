#include "agent/session.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "agent/conversation.h"
#include "agent/executor_client.h"
#include "agent/interrupt.h"
#include "agent/llm/local.h"
#include "agent/llm/provider.h"
#include "agent/llm/transport.h"
#include "agent/llm/key_store.h"
#include "agent/loop.h"
#include "agent/model_setup.h"
#include "agent/paths.h"
#include "base/terminal_text.h"
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

// --conversations: list, let the user pick, load. nullopt: nothing chosen.
std::optional<std::pair<std::string, std::vector<Message>>> pick_conversation(const std::string& dir, Display& d,
                                                                              UserInput& input) {
  auto list = list_conversations(dir);
  if (list.empty()) {
    d.notice(NoticeLevel::info, "No saved conversations in " + dir + ".");
    return std::nullopt;
  }
  std::string menu = "Saved conversations (newest first):";
  for (size_t i = 0; i < list.size() && i < 30; ++i) menu += "\n  " + std::to_string(i + 1) + ". " + list[i].name;
  d.notice(NoticeLevel::info, menu);
  bool interrupted = false;
  auto answer = input.read_message("Resume which one? ", &interrupted);
  if (!answer || interrupted) return std::nullopt;
  char* end = nullptr;
  long n = std::strtol(answer->c_str(), &end, 10);
  if (end == answer->c_str() || n < 1 || static_cast<size_t>(n) > list.size()) {
    d.notice(NoticeLevel::error, "`" + *answer + "` is not one of the numbers listed");
    return std::nullopt;
  }
  auto loaded = load_conversation(list[static_cast<size_t>(n) - 1].path);
  if (!loaded) {
    d.notice(NoticeLevel::error, loaded.status().message());
    return std::nullopt;
  }
  return std::make_pair(list[static_cast<size_t>(n) - 1].path, std::move(*loaded));
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
  auto config = resolve_config(cli, env);
  if (!config) {
    // (A profile may be a file in the workspace, which sandboxed code can write: its text is quoted escaped.)
    std::fprintf(stderr, "interpreter: %s\n", escape_for_terminal(config.status().message(), true).c_str());
    return 2;
  }
  AgentConfig& c = *config;
  const char* no_color = std::getenv("NO_COLOR");
  auto display = make_display({c.json, c.plain, !(no_color && *no_color), c.verbose});
  for (const auto& w : c.warnings) display->notice(NoticeLevel::warning, w);

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

  TerminalInput input(c.json);
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
    llm = make_client(settings);
  }

  SupervisorOptions sup;
  sup.sandbox = c.sandbox;
  sup.policy = c.policy;
  // Every provider's key variables, the key in use and every saved key: none reaches the sandbox.
  for (const auto& row : provider_table()) {
    for (auto v : row.key_variables) sup.secret_variables.emplace_back(v);
  }
  if (!settings.key_variable.empty()) sup.secret_variables.push_back(settings.key_variable);
  if (!settings.api_key.empty()) sup.secret_values.push_back(settings.api_key);
  for (auto& k : keys.all()) sup.secret_values.push_back(std::move(k));
  SupervisorClient executor(sup);
  executor.prestart();

  ConversationStore store(conversations_dir(env));
  AgentParts parts;
  if (c.conversations) {
    auto picked = pick_conversation(store.dir(), *display, input);
    if (!picked) return 1;
    store.attach(picked->first);
    parts.history = std::move(picked->second);
    display->notice(NoticeLevel::info, "Resumed " + picked->first + " (" + std::to_string(parts.history.size()) +
                                           " messages).");
  }
  parts.config = c;
  parts.llm = std::move(llm);
  parts.executor = &executor;
  parts.display = display.get();
  parts.input = &input;
  parts.store = &store;
  Agent agent(std::move(parts));

  if (c.sandbox == "none") {
    display->notice(NoticeLevel::warning, "--sandbox none: code runs on this host, as you, with no confinement." +
                                              std::string(c.auto_run ? "" : " Every block asks first."));
  }
  int status = 0;
  if (!c.prompt.empty() || c.stdin_prompt) {
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
