#pragma once
// From what the user said (model name, --provider, --api_base, --api_key, the environment) to LlmSettings:
//   claude-* or anthropic/...  -> Anthropic Messages (key ANTHROPIC_API_KEY)
//   ollama/... or ollama_chat/ -> Ollama's OpenAI-compatible API on localhost:11434 (no key)
//   anything else              -> OpenAI-compatible chat completions (key OPENAI_API_KEY; none needed with a
//                                 custom --api_base)
// --provider openai|anthropic|ollama overrides the guess.
#include <functional>
#include <optional>
#include <string>

#include "agent/llm/client.h"
#include "base/status.h"

namespace oishell::agent {

struct ModelChoice {
  std::string model;                   // as given (-m, profile llm.model)
  std::string provider;                // --provider (empty: from the model name)
  std::string api_base;                // empty: the provider's default
  std::string api_key;                 // empty: from the environment
  std::string api_version;             // Azure's api-version (--api_version, AZURE_API_VERSION)
  std::string api_key_origin = "--api_key";
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_env();

// Fills provider, model, api_base, api_key, key_source and key_variable of `out`; everything else is left alone.
Status resolve_provider(const ModelChoice& choice, const EnvLookup& env, LlmSettings* out);

// Joins an API base and an endpoint path ("/chat/completions") unless the base already ends with it.
std::string join_endpoint(const std::string& base, const std::string& path);

// A typical context window for a model name, when the user did not give one.
int default_context_window(Provider provider, const std::string& model);

}  // namespace oishell::agent
