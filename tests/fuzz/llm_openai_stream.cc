// An OpenAI-compatible chat-completions stream as a (possibly hostile or broken) model server sends it: server-sent
// events (agent/llm/sse.h) fed in pieces, each `data:` applied to the response (apply_openai_chunk), and the
// finished answer taken apart into text and code (agent/code_extract.h).
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/llm/openai_client.h"
#include "agent/llm/sse.h"
#include "tests/fuzz/llm_sink.h"

using namespace oishell::agent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const size_t piece = 1 + input.byte();
  const std::string_view stream = input.rest();
  LlmResponse response;
  oishell::fuzz::CheckingSink sink;
  bool failed = false;
  SseParser parser([&](const SseEvent& event) {
    if (failed || response.complete) return;
    // As the client does (complete()): a chunk of unexpected shape is a json exception, reported, the rest kept.
    try {
      if (!apply_openai_chunk(event.data, &response, sink).is_ok()) failed = true;
    } catch (const nlohmann::json::exception&) {
      failed = true;
    }
  });
  for (size_t at = 0; at < stream.size(); at += piece) parser.feed(stream.substr(at, piece));
  parser.finish();
  FUZZ_CHECK(parser.pending_bytes() == 0);
  oishell::fuzz::extract(response);
  return 0;
}
