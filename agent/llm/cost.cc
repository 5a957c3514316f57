#include "agent/llm/cost.h"

#include <cstdio>

#include "agent/llm/models.h"

namespace oishell::agent {

void CostMeter::add(const std::optional<TokenUsage>& reported, const TokenUsage& estimate) {
  const TokenUsage& u = reported ? *reported : estimate;
  if (!reported) ++estimated_calls_;
  ++calls_;
  tokens_.input += u.input;
  tokens_.output += u.output;
  if (price_) spent_ += cost_of(u, *price_);
}

std::optional<double> CostMeter::input_cost(long input) const {
  if (!price_) return std::nullopt;
  return cost_of(TokenUsage{input, 0}, *price_);
}

std::string format_usd(double usd) {
  char buf[64];
  std::snprintf(buf, sizeof buf, usd < 1 ? "$%.4f" : "$%.2f", usd);
  return buf;
}

std::optional<std::string> budget_refusal(const CostMeter& meter, double budget, long next_input) {
  std::string spent = format_usd(meter.spent()) + (meter.estimated_calls() ? " (partly estimated)" : "");
  if (meter.spent() >= budget) {
    return "Budget reached: this session's model calls have cost " + spent + " of --max_budget " +
           format_usd(budget) + ". Stopped before the next call to the model.";
  }
  auto next = meter.input_cost(next_input);
  if (next && meter.spent() + *next > budget) {
    return "Budget: the next request alone (about " + std::to_string(next_input) + " input tokens, " +
           format_usd(*next) + ") would take the session from " + spent + " past --max_budget " + format_usd(budget) +
           ". Stopped before the next call to the model.";
  }
  return std::nullopt;
}

}  // namespace oishell::agent
