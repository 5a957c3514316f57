#pragma once
// The LLM stream targets' shared part: a StreamSink that checks what it is told, and the model's finished answer
// taken apart as the loop does (agent/core/code_extract.h, agent/core/loop.cc's partial_json_string on tool calls in flight).
#include <optional>
#include <string>
#include <string_view>

#include "agent/core/code_extract.h"
#include "agent/sandbox/computer_tool.h"
#include "agent/llm/client.h"
#include "agent/llm/sse.h"
#include "agent/core/partial_json.h"
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

// The input as a model server's stream: its first byte the size of the pieces it arrives in, the rest server-sent
// events. `apply` takes each event to the response, as the client does; a chunk of unexpected shape is a json
// exception, reported and the rest kept (complete() catches it), and ends what is applied here. Then the finished
// answer is taken apart.
template <typename Apply>
void stream_answer(const uint8_t* data, size_t size, Apply apply) {
  Input input(data, size);
  const size_t piece = 1 + input.byte();
  const std::string_view stream = input.rest();
  agent::LlmResponse response;
  CheckingSink sink;
  bool failed = false;
  agent::SseParser parser([&](const agent::SseEvent& event) {
    if (failed || response.complete) return;
    try {
      failed = !apply(event, &response, sink).is_ok();
    } catch (const nlohmann::json::exception&) {
      failed = true;
    }
  });
  for (size_t at = 0; at < stream.size(); at += piece) parser.feed(stream.substr(at, piece));
  parser.finish();
  FUZZ_CHECK(parser.pending_bytes() == 0);
  extract(response);
}

}  // namespace oishell::fuzz
