// An Anthropic messages stream as a model server sends it: server-sent events (agent/llm/sse.h) fed in pieces,
// each event applied (apply_anthropic_event), and the finished answer taken apart (agent/core/code_extract.h).
#include <cstdint>
#include <vector>

#include "agent/llm/anthropic_client.h"
#include "tests/fuzz/llm_sink.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<int> block_to_call;
  oishell::fuzz::stream_answer(data, size, [&](const auto& event, auto* response, auto& sink) {
    return oishell::agent::apply_anthropic_event(event.event, event.data, response, &block_to_call, sink);
  });
  return 0;
}
