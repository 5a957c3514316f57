#pragma once
// The conversation in Open Interpreter's form -> the request bodies of the two wire formats. Code becomes an
// `execute` tool call when tools are used (each answered by its output, synthesised when missing so the APIs
// accept the history), or a fenced block in the assistant's text otherwise.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/config/harness.h"
#include "agent/core/message.h"

namespace oishell::agent {

// The `execute(language, code)` tool's JSON schema (parameters / input_schema).
nlohmann::json execute_tool_schema(const std::vector<std::string>& languages);
extern const char* const kExecuteToolDescription;

// A tool the model is offered, in neither wire format yet (each client wraps it in its own).
struct OfferedTool {
  std::string name;
  std::string description;
  nlohmann::json parameters;  // a JSON schema
};
// The tools a model that calls tools is offered, in order: `execute` (unless the harness has no use for it), then the
// harness's own. (The computer tool, whose form differs between the APIs, each client adds itself.)
std::vector<OfferedTool> offered_tools(const Harness* harness, const std::vector<std::string>& languages);

// Images (agent/llm/image.h) go to a model that can see (`vision`) in each API's form: OpenAI's
// {"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}} part of a user message, Anthropic's
// {"type": "image", "source": {"type": "base64", "media_type", "data"}} block; to other models as a description.

// "messages" of a chat-completions request, system prompt first.
// `harness`: a code block whose language is one of its tools is a call of that tool (content: the arguments).
nlohmann::json to_openai_messages(const std::string& system, const std::vector<Message>& messages, bool use_tools,
                                  bool vision = false, const Harness* harness = nullptr);
// "messages" of an Anthropic Messages request (the system prompt goes in its own field).
nlohmann::json to_anthropic_messages(const std::vector<Message>& messages, bool use_tools, bool vision = false,
                                     const Harness* harness = nullptr);

// How code output is put to a model that has no tools.
std::string output_as_user_text(const std::string& output);

}  // namespace oishell::agent
