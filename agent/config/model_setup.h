#pragma once
// Which model the session talks to, from the merged configuration: the provider table (agent/llm/provider.h), the
// no-model flow (agent/llm/key_prompt.h), whether images are sent (--llm_supports_vision, else a guess from the
// name), the price (for --max_budget and %tokens) and usage reporting.
#include <optional>

#include "agent/config/config.h"
#include "agent/core/display.h"
#include "agent/llm/client.h"
#include "agent/llm/key_store.h"
#include "agent/llm/provider.h"
#include "agent/user/user_input.h"
#include "base/status.h"

namespace oishell::agent {

// Open Interpreter's default model, used when none is configured anywhere.
inline constexpr const char* kDefaultModel = "gpt-4o";

// nullopt: no model (none configured, no OpenAI key and nobody at a terminal to type one): the caller shows how to
// configure one. An error: a configuration that cannot work (an unknown provider prefix, a budget for a model
// whose price is unknown); the caller exits 2.
Result<std::optional<LlmSettings>> choose_model(const AgentConfig& config, const EnvLookup& env, Display& display,
                                                UserInput& input, const KeyStore& keys);

}  // namespace oishell::agent
