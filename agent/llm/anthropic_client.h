#pragma once
// Anthropic's Messages API with streaming and tool use.
#include <nlohmann/json.hpp>

#include "agent/llm/client.h"

namespace oishell::agent {

class AnthropicClient final : public LlmClient {
 public:
  explicit AnthropicClient(LlmSettings settings) : LlmClient(std::move(settings)) {}
  Result<LlmResponse> complete(const std::string& system, const std::vector<Message>& messages,
                               StreamSink& sink) override;
  nlohmann::json request_body(const std::string& system, const std::vector<Message>& messages) const;
};

// Applies one event of a Messages stream (its `event:` name and `data:` JSON) to `response`.
// `block_to_call` maps content-block indexes to tool-call indexes.
Status apply_anthropic_event(const std::string& event, const std::string& data, LlmResponse* response,
                             std::vector<int>* block_to_call, StreamSink& sink);

}  // namespace oishell::agent
