#pragma once
// From a model's answer to what to run. Tool calls of `execute(language, code)` where the model has tools; fenced
// code blocks (no tag means python) otherwise. Repairs what models get wrong, as Open Interpreter does:
//   - a tool call printed as JSON text ({"language": ..., "code": ...} or {"name": "execute", "arguments": ...})
//   - `functions.execute({...})` or `functions.execute(language="python", code="...")` written as text
//   - a stray backtick (or a whole ``` fence) around the code
//   - an empty block (not run; the model is told)
//   - an unknown language (not run; the model is told which languages exist)
//   - tool arguments that are broken JSON, a tool named `python` whose arguments are the code
#include <optional>
#include <string>
#include <vector>

#include "agent/sandbox/computer_tool.h"
#include "agent/config/harness.h"

#include "agent/llm/client.h"
#include "agent/core/message.h"

namespace oishell::agent {

struct AnswerPart {
  Message message;      // assistant "message" or "code"
  std::string problem;  // for code: why it is not run (told to the model as its output); empty = run it
};

struct Extraction {
  std::vector<AnswerPart> parts;    // in order: text and code as the conversation keeps them
  std::vector<std::string> repairs; // what was repaired (shown with --verbose)
};

// `languages`: what the sandbox can run (canonical names). `computer`: the screen of the `computer` tool when it is
// on (--os); a call of it becomes a code block of language "computer" holding the action (agent/sandbox/computer_tool.h).
// `harness`: a call of one of its tools becomes a code block of the tool's name holding the arguments (JSON).
Extraction extract_answer(const LlmResponse& response, const std::vector<std::string>& languages,
                          const std::optional<ComputerScreen>& computer = std::nullopt,
                          const Harness* harness = nullptr);

// python for py/python3/"", shell for sh/bash/zsh/shell/console, javascript for js/node/javascript, r for R;
// others lower-cased.
std::string canonical_language(std::string_view tag);

// Removes a stray leading backtick or a ``` fence around code; returns the fence's language tag if there was one.
std::string strip_code_fences(std::string* code);

}  // namespace oishell::agent
