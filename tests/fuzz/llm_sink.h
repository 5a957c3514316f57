#pragma once
// The LLM stream targets' shared part: a StreamSink that checks what it is told, and the model's finished answer
// taken apart as the loop does (agent/code_extract.h, agent/loop.cc's partial_json_string on tool calls in flight).
#include <optional>
#include <string>
#include <string_view>

#include "agent/code_extract.h"
#include "agent/computer_tool.h"
#include "agent/llm/client.h"
#include "agent/partial_json.h"
#include "tests/fuzz/fuzz_input.h"

namespace oishell::fuzz {

class CheckingSink final : public agent::StreamSink {
 public:
  void on_text(std::string_view delta) override { text_bytes += delta.size(); }
  void on_tool_call(size_t index, const agent::ToolCall& call) override {
    FUZZ_CHECK(index < 4096);
    (void)agent::partial_json_string(call.arguments, "code");
    (void)agent::partial_json_string(call.arguments, "language");
  }
  void on_retry(const std::string&, long) override {}
  size_t text_bytes = 0;
};

// What the agent does with a finished answer: extracts the code blocks and tool calls (with and without the
// computer tool).
inline void extract(const agent::LlmResponse& response) {
  static const std::vector<std::string> languages = {"python", "shell", "javascript", "r"};
  (void)agent::extract_answer(response, languages);
  (void)agent::extract_answer(response, languages, agent::ComputerScreen{});
}

}  // namespace oishell::fuzz
