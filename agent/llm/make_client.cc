#include "agent/llm/anthropic_client.h"
#include "agent/llm/client.h"
#include "agent/llm/openai_client.h"

namespace oishell::agent {

std::unique_ptr<LlmClient> make_client(const LlmSettings& settings) {
  switch (settings.provider) {
    case Provider::anthropic: return std::make_unique<AnthropicClient>(settings);
    case Provider::openai:
    case Provider::azure:
    case Provider::ollama: return std::make_unique<OpenAiClient>(settings);
  }
  return std::make_unique<OpenAiClient>(settings);
}

}  // namespace oishell::agent
