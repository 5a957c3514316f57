#pragma once
// From what the user said (model name, --provider, --api_base, --api_key, the environment) to LlmSettings.
//
// Model names are read as LiteLLM (and so Open Interpreter) reads them: `provider/model` picks a row of the provider
// table (provider.cc, kProviders: prefix, wire format, default API base, the variables of its base and key), and
// the prefix is removed before the name is sent; `claude-*` is Anthropic; any other name without a known prefix is
// OpenAI's. An unknown `x/y` is an error listing the known prefixes, unless --api_base is given: then it is an
// OpenAI-compatible server's model name, sent whole (vLLM serves `meta-llama/Llama-3.1-8B-Instruct`).
//
// The API base: --api_base, else the row's base variable (OPENAI_API_BASE, GROQ_API_BASE, ...), else the row's
// default. The key: --api_key, else the first of the row's key variables that is set, else a key saved by the
// no-model flow (key_store.h). --provider NAME picks a row by name instead of by the model's prefix.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/llm/client.h"
#include "base/status.h"

namespace oishell::agent {

class KeyStore;

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

// One row of the provider table.
struct ProviderRow {
  std::string_view prefix;          // "groq/"; for a row matched by name ("claude") the name's start
  bool strip;                       // the prefix is removed from the model name sent to the API
  Provider api;                     // the wire format
  std::string_view name;            // "Groq", for messages
  std::string_view base;            // the default API base; empty: it must be given (Azure's is per resource)
  std::vector<std::string_view> base_variables;  // read when --api_base is not given
  std::vector<std::string_view> key_variables;   // the first set one is used; the first is named in messages
  bool stream_usage;                // accepts stream_options.include_usage (usage at the end of a stream); asked
                                    // only of the default base
};

// The table, in the order names are matched.
const std::vector<ProviderRow>& provider_table();
// "openai/, anthropic/, azure/, ..." for messages.
std::string known_prefixes();

// Azure's default api-version when neither --api_version nor AZURE_API_VERSION gives one.
inline constexpr std::string_view kAzureDefaultApiVersion = "2024-10-21";

// Fills provider, model, api_base, api_key, key_source, key_variable, service, service_name, api_version and
// stream_usage of `out`; everything else is left alone. `saved` (may be null) holds keys saved by the user.
Status resolve_provider(const ModelChoice& choice, const EnvLookup& env, LlmSettings* out,
                        const KeyStore* saved = nullptr);

// Joins an API base and an endpoint path ("/chat/completions") unless the base already ends with it.
std::string join_endpoint(const std::string& base, const std::string& path);

// The chat-completions URL of `settings`: base + /chat/completions, or Azure's
// base/openai/deployments/<model>/chat/completions?api-version=<version>.
std::string chat_completions_url(const LlmSettings& settings);

// A typical context window for a model name, when the user did not give one.
int default_context_window(Provider provider, const std::string& model);

}  // namespace oishell::agent
