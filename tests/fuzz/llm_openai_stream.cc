// An OpenAI-compatible chat-completions stream as a (possibly hostile or broken) model server sends it: server-sent
// events (agent/llm/sse.h) fed in pieces, each `data:` applied to the response (apply_openai_chunk), and the
// finished answer taken apart into text and code (agent/core/code_extract.h).
#include <cstdint>

#include "agent/llm/openai_client.h"
#include "tests/fuzz/llm_sink.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::stream_answer(data, size, [](const auto& event, auto* response, auto& sink) {
    return oishell::agent::apply_openai_chunk(event.data, response, sink);
  });
  return 0;
}
