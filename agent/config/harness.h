#pragma once
// Harness profiles: the prompting and tool formats of other agents, mapped onto the same sandbox and executors, so
// that a model tuned to one of them works as it was trained (`interpreter --profile claude-code`; docs/interpreter.md
// "Harness profiles"). A harness is a prompt and a set of tools. Each tool call becomes a code block whose language
// is the tool's name and whose content is the call's arguments (JSON); running it means either a command for the
// persistent shell (Claude Code's Bash, SWE-agent's bash, Codex's shell) or a call of the harness's python
// implementation (runtime/executors/drivers/oishell_harness.py) with the arguments as data, never as source.
// Built in: claude-code, swe-agent, codex. A profile can define its own (`harness:` mapping) or extend a built-in.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace oishell::agent {

struct HarnessTool {
  std::string name;
  std::string description;
  nlohmann::json parameters;  // a JSON schema (type object)
  enum class Run {
    shell,     // the string argument `argument` is a command for the shell executor
    argv,      // the array argument `argument` is an argv, run by the shell executor quoted (Codex's shell)
    builtin,   // oishell_harness.py's implementation `function`
    python,    // the profile's python `code`, run with `args` (the call's arguments) defined
  };
  Run run = Run::builtin;
  std::string argument;  // shell, argv: the argument holding the command
  std::string function;  // builtin: "claude_code.edit"
  std::string code;      // python: the profile's code
};

struct Harness {
  std::string name;
  std::string prompt;         // instead of Open Interpreter's default instructions
  bool execute_tool = false;  // whether the model also gets Open Interpreter's execute(language, code)
  std::vector<HarnessTool> tools;
  const HarnessTool* find(std::string_view tool) const;
};

// The built-in harness of that name (claude-code, swe-agent, codex), or nullopt.
std::optional<Harness> builtin_harness(std::string_view name);
std::vector<std::string> builtin_harness_names();

// Checks a call's arguments against the tool's schema: a JSON object, every `required` property present, and each
// property of a declared type (string, integer, number, boolean, array, object) of that type. Empty when valid.
std::string harness_arguments_problem(const HarnessTool& tool, const nlohmann::json& arguments);

// What runs for a valid call: the executor's language ("shell" or "python") and its code.
struct HarnessBlock {
  std::string language;
  std::string code;
};
HarnessBlock harness_block(const Harness& harness, const HarnessTool& tool, const nlohmann::json& arguments);

// One line (or the command itself, for shell tools) for the user: "Edit calc.py", "Read calc.py".
std::string describe_harness_call(const HarnessTool& tool, const nlohmann::json& arguments);

// Quotes one word for sh: 'it'\''s'.
std::string shell_quote(std::string_view word);

}  // namespace oishell::agent
