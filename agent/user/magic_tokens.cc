#include "agent/user/magic_tokens.h"

#include <cstdio>

#include "agent/core/context.h"
#include "agent/llm/cost.h"
#include "agent/core/loop.h"

namespace oishell::agent {
namespace {

std::string price_text(const TokenPrice& p) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "$%.3g / $%.3g per million input / output tokens", p.input, p.output);
  return buf;
}

}  // namespace

void show_tokens(Agent& agent, const std::string& prompt) {
  std::string system = agent.system_prompt();
  size_t sys = estimate_tokens(system);
  size_t msgs = estimate_tokens(agent.messages());
  size_t images = 0;
  for (const auto& m : agent.messages()) images += m.type == "image" ? 1 : 0;
  size_t typed = prompt.empty() ? 0 : estimate_tokens(Message::user(prompt));
  size_t next = sys + msgs + typed;

  std::string text = "Tokens (estimated, about 4 characters a token):\n";
  text += "  system prompt   " + std::to_string(sys) + "\n";
  text += "  conversation    " + std::to_string(msgs) + " (" + std::to_string(agent.messages().size()) +
          " messages" + (images ? ", " + std::to_string(images) + " images" : std::string()) + ")\n";
  if (!prompt.empty()) text += "  this prompt     " + std::to_string(typed) + "\n";
  text += "  next request    " + std::to_string(next) + " of a context window of " +
          std::to_string(agent.context_window()) + "\n";

  LlmClient* llm = agent.llm();
  const CostMeter& cost = agent.cost();
  if (!llm) {
    text += "Cost: no model is configured.";
  } else if (!cost.price_known()) {
    text += "Cost: unknown — no price is known for `" + llm->settings().model +
            "` (give one as OISHELL_MODEL_PRICE=IN,OUT, USD per million input and output tokens).";
  } else {
    text += "Cost (" + llm->settings().model + " at " + price_text(*cost.price()) + "):\n";
    text += "  next request    about " + format_usd(*cost.input_cost(static_cast<long>(next))) +
            " for its input, plus its answer's output\n";
    text += "  this session    " + format_usd(cost.spent()) + " for " + std::to_string(cost.calls()) + " calls (" +
            std::to_string(cost.tokens().input) + " input and " + std::to_string(cost.tokens().output) +
            " output tokens" + (cost.estimated_calls() ? ", partly estimated: the API reported no usage" : "") + ")";
    if (auto budget = agent.config().max_budget) {
      double left = *budget - cost.spent();
      text += "\n  budget          " + format_usd(*budget) + " (--max_budget), " + format_usd(left > 0 ? left : 0) +
              " left";
    }
  }
  agent.display().notice(NoticeLevel::info, text);
}

}  // namespace oishell::agent
