#pragma once
// The system prompt: who the model is and how to run code (the execute tool, or fenced blocks), the host facts
// (OS and distribution, working directory, shell, languages, date) and what the sandbox allows, so the model knows
// what it cannot do. A custom system message replaces the instructions; custom instructions are appended.
#include <string>
#include <string_view>
#include <vector>

namespace oishell::agent {

struct HostFacts {
  std::string os;       // "Debian GNU/Linux 12 (bookworm), Linux 6.18 x86_64"
  std::string cwd;
  std::string shell;
  std::string user;
  std::string date;     // "Monday, 30 November 2026"
  static HostFacts collect();
};

struct PromptInputs {
  HostFacts facts;
  std::vector<std::string> languages;
  bool tools = true;
  std::string sandbox_description;  // one line
  std::string policy_summary;       // may be empty
  std::string system_message;       // replaces the default instructions when not empty
  bool execute_tool = true;         // the model has execute(language, code) (a harness may give other tools only)
  std::string custom_instructions;
};

std::string build_system_prompt(const PromptInputs& in);
// The default instructions (what a custom system message replaces), as Open Interpreter's `system_message` reads.
std::string_view default_instructions();

}  // namespace oishell::agent
