#pragma once
// What the agent knows about well-known models by name: their price (for --max_budget and %tokens) and whether
// they can see images (when --llm_supports_vision does not say). Names are matched after the provider prefix is
// removed and, for gateways that name models `vendor/model` (OpenRouter, Together), after the vendor; a dated
// snapshot (`gpt-4o-2024-08-06`, `claude-3-5-sonnet-20241022`) matches its family's entry.
#include <optional>
#include <string>

#include "agent/llm/client.h"

namespace oishell::agent {

// USD per million input and output tokens, as the providers published them (2025). Local servers (Ollama) cost
// nothing. nullopt: unknown; the cost of such a model cannot be tracked.
std::optional<TokenPrice> known_price(Provider provider, const std::string& model);

// A price given by the user: "IN,OUT" (USD per million input and output tokens), from OISHELL_MODEL_PRICE.
std::optional<TokenPrice> parse_price(const std::string& text);
inline constexpr const char* kPriceVariable = "OISHELL_MODEL_PRICE";

// gpt-4o*, gpt-4.1*, gpt-5*, o1/o3/o4 (not the -mini of o1/o3), claude-3 and later, gemini*, llava and the other
// open vision models (llama3.2-vision, qwen-vl, pixtral, gemma3, minicpm-v, moondream), grok vision models.
bool guess_supports_vision(const std::string& model);

// USD for `usage` at `price`.
double cost_of(const TokenUsage& usage, const TokenPrice& price);

}  // namespace oishell::agent
