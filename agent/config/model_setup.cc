#include "agent/config/model_setup.h"

#include "agent/llm/cost.h"
#include "agent/llm/key_prompt.h"
#include "agent/llm/models.h"
#include "agent/llm/provider.h"

namespace oishell::agent {

Result<std::optional<LlmSettings>> choose_model(const AgentConfig& c, const EnvLookup& env, Display& display,
                                                UserInput& input, const KeyStore& keys) {
  const bool configured = !c.model.model.empty() || !c.model.api_base.empty();
  ModelChoice choice = c.model;
  if (choice.model.empty()) choice.model = configured ? "local" : kDefaultModel;  // --api_base alone: the server's
  LlmSettings s;
  if (Status st = resolve_provider(choice, env, &s, &keys); !st.is_ok()) return st;

  // OI asks for the OpenAI key when it talks to OpenAI (no --api_base of the user's) and none is set.
  if (s.api_key.empty() && s.service == "openai" && choice.api_base.empty()) {
    std::optional<std::string> typed;
    if (!c.json && input.can_ask()) typed = ask_for_api_key(s.key_variable, s.model, display, input, keys);
    if (typed) {
      s.api_key = *typed;
      s.key_source = "the key typed at the start of this session";
    } else if (!configured) {
      return std::optional<LlmSettings>();  // nobody to answer: the no-model screen, as before
    }
  }

  // A public service without a key would only answer 401: say so before anything leaves this machine.
  if (s.api_key.empty()) {
    for (const auto& row : provider_table()) {
      std::string key(row.prefix);
      if (!key.empty() && key.back() == '/') key.pop_back();
      if (key != s.service || row.api == Provider::ollama || row.base.empty()) continue;
      if (s.api_base != row.base) break;  // a server of the user's (a proxy, a local server): it may need none
      return Status::error("no API key for " + std::string(row.name) + " (model `" + s.model + "`): set " +
                           std::string(row.key_variables.front()) + ", or give --api_key");
    }
  }

  s.temperature = c.temperature;
  s.max_tokens = c.max_tokens;
  s.supports_functions = c.supports_functions;
  s.supports_vision = c.supports_vision ? *c.supports_vision : guess_supports_vision(s.model);

  if (auto given = env(kPriceVariable)) {
    s.price = parse_price(*given);
    if (!s.price) {
      return Status::error(std::string(kPriceVariable) + "=`" + *given +
                           "` is not a price: write IN,OUT (USD per million input and output tokens, e.g. 2.5,10)");
    }
  } else {
    s.price = known_price(s.provider, s.model);
  }
  if (c.max_budget) {
    if (!s.price) {
      // Fail closed: a budget that cannot be counted would not stop anything.
      return Status::error("--max_budget " + format_usd(*c.max_budget) + ": the price of `" + s.model +
                           "` is not known here, so its cost cannot be tracked and the budget could not be kept. "
                           "Give the price as " + kPriceVariable +
                           "=IN,OUT (USD per million input and output tokens), or choose a model whose price is "
                           "known (gpt-4o, claude-sonnet-4-5, gemini-2.5-pro, ...; %tokens shows it).");
    }
    s.stream_usage = true;  // the budget needs the usage; servers that do not report it are estimated
  }
  return std::optional<LlmSettings>(std::move(s));
}

}  // namespace oishell::agent
