#pragma once
// One streaming request to an LLM API with the error handling both wire formats share: retries with backoff on
// 429, 5xx and network errors (only while no byte of the answer has arrived), Retry-After honoured, and clear
// messages for 401/403 (which key, from where, which provider) and other failures; and the reading of the answer's
// events into an LlmResponse, where a wire format brings only how one event applies (stream_response).
#include <functional>
#include <string>
#include <vector>

#include "agent/llm/client.h"
#include "agent/llm/sse.h"
#include "base/status.h"

namespace oishell::agent {

struct SseCall {
  std::string url;
  std::vector<std::string> headers;
  std::string body;
};

struct SseOutcome {
  bool cancelled = false;
  std::string cut_reason;  // non-empty when the transfer failed after data had arrived
};

// `on_event` receives every SSE event of the (last) attempt.
Result<SseOutcome> stream_sse(const LlmSettings& settings, const SseCall& call, StreamSink& sink,
                              const std::function<void(const SseEvent&)>& on_event);

// One answer of either wire format, streamed with stream_sse: `apply` (the format's own reading) applies each event to
// the answer. An error it returns, or an event of unexpected shape, ends the reading: what arrived before is kept as a
// cut answer (cut_reason: the error), or the error is the result when nothing did. A cancel and a transfer cut after
// data are recorded, and an answer whose end never came is cut ("the connection closed before ...").
using ApplySseEvent = std::function<Status(const SseEvent& event, LlmResponse* response)>;
Result<LlmResponse> stream_response(const LlmSettings& settings, const SseCall& call, StreamSink& sink,
                                    const ApplySseEvent& apply);

// "OpenAI-compatible API", "Anthropic API", "Ollama", "Azure OpenAI API".
std::string provider_display_name(Provider p);
// The service by name when it is one of the provider table's ("Groq's API"), else provider_display_name().
std::string api_display_name(const LlmSettings& settings);
// The `error.message` of a JSON error body, else the body itself (trimmed, capped).
std::string api_error_text(const std::string& body);

}  // namespace oishell::agent
