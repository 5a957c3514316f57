#pragma once
// What the session's model calls have cost (--max_budget, %tokens): the usage each API reports (OpenAI's
// stream_options.include_usage, Anthropic's message_start / message_delta) at the model's price; where an answer
// came without usage, the text's estimate (about 4 characters a token) is counted instead and the total is marked
// estimated.
#include <optional>
#include <string>

#include "agent/llm/client.h"

namespace oishell::agent {

class CostMeter {
 public:
  explicit CostMeter(std::optional<TokenPrice> price = std::nullopt) : price_(price) {}

  // One call: what the API reported, else `estimate`.
  void add(const std::optional<TokenUsage>& reported, const TokenUsage& estimate);

  bool price_known() const { return price_.has_value(); }
  const std::optional<TokenPrice>& price() const { return price_; }
  double spent() const { return spent_; }  // USD; 0 when the price is unknown
  const TokenUsage& tokens() const { return tokens_; }
  int calls() const { return calls_; }
  int estimated_calls() const { return estimated_calls_; }  // calls without reported usage
  // USD for `input` tokens sent (nullopt: price unknown).
  std::optional<double> input_cost(long input) const;

 private:
  std::optional<TokenPrice> price_;
  double spent_ = 0;
  TokenUsage tokens_;
  int calls_ = 0;
  int estimated_calls_ = 0;
};

// "$0.0125" (4 decimals under a dollar, else cents).
std::string format_usd(double usd);

// Whether the next call may be made under `budget` USD: nullopt when it may, else why not (the message shown).
// It may not when the session has spent the budget, or when the next request's input alone (`next_input` tokens,
// estimated) would go over it.
std::optional<std::string> budget_refusal(const CostMeter& meter, double budget, long next_input);

}  // namespace oishell::agent
