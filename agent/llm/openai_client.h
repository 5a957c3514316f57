#pragma once
// OpenAI-compatible chat completions with SSE streaming and tool calls: OpenAI, Ollama's and llama.cpp's servers,
// LM Studio, vLLM and gateways.
#include <nlohmann/json.hpp>

#include "agent/llm/client.h"

namespace oishell::agent {

class OpenAiClient final : public LlmClient {
 public:
  explicit OpenAiClient(LlmSettings settings) : LlmClient(std::move(settings)) {}
  Result<LlmResponse> complete(const std::string& system, const std::vector<Message>& messages,
                               StreamSink& sink) override;
  // The request body (exposed for tests).
  nlohmann::json request_body(const std::string& system, const std::vector<Message>& messages) const;
};

// Applies one `data:` payload of a chat-completions stream to `response`, reporting deltas to `sink`.
// Returns an error for an `error` object in the stream.
Status apply_openai_chunk(const std::string& data, LlmResponse* response, StreamSink& sink);

}  // namespace oishell::agent
