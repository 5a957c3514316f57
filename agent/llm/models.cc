#include "agent/llm/models.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>

namespace oishell::agent {
namespace {

struct PriceRow {
  std::string_view family;  // matched as a prefix of the name, the longest first (table order)
  double input, output;     // USD per million tokens
};

// Longer names before the shorter names they start with ("gpt-4o-mini" before "gpt-4o").
constexpr PriceRow kPrices[] = {
    // OpenAI
    {"gpt-4o-mini", 0.15, 0.60},
    {"gpt-4o-2024-05-13", 5.00, 15.00},
    {"gpt-4o", 2.50, 10.00},
    {"chatgpt-4o", 5.00, 15.00},
    {"gpt-4.1-nano", 0.10, 0.40},
    {"gpt-4.1-mini", 0.40, 1.60},
    {"gpt-4.1", 2.00, 8.00},
    {"gpt-4-turbo", 10.00, 30.00},
    {"gpt-4-32k", 60.00, 120.00},
    {"gpt-4", 30.00, 60.00},
    {"gpt-3.5-turbo", 0.50, 1.50},
    {"gpt-5-nano", 0.05, 0.40},
    {"gpt-5-mini", 0.25, 2.00},
    {"gpt-5", 1.25, 10.00},
    {"o1-mini", 1.10, 4.40},
    {"o1", 15.00, 60.00},
    {"o3-mini", 1.10, 4.40},
    {"o3", 2.00, 8.00},
    {"o4-mini", 1.10, 4.40},
    // Anthropic
    {"claude-3-5-haiku", 0.80, 4.00},
    {"claude-3-haiku", 0.25, 1.25},
    {"claude-haiku-4", 1.00, 5.00},
    {"claude-3-5-sonnet", 3.00, 15.00},
    {"claude-3-7-sonnet", 3.00, 15.00},
    {"claude-3-sonnet", 3.00, 15.00},
    {"claude-sonnet-4", 3.00, 15.00},
    {"claude-3-opus", 15.00, 75.00},
    {"claude-opus-4-5", 5.00, 25.00},
    {"claude-opus-4", 15.00, 75.00},
    // Google
    {"gemini-2.5-pro", 1.25, 10.00},
    {"gemini-2.5-flash-lite", 0.10, 0.40},
    {"gemini-2.5-flash", 0.30, 2.50},
    {"gemini-2.0-flash-lite", 0.075, 0.30},
    {"gemini-2.0-flash", 0.10, 0.40},
    {"gemini-1.5-pro", 1.25, 5.00},
    {"gemini-1.5-flash", 0.075, 0.30},
    // DeepSeek, Mistral, xAI, Groq's Llama
    {"deepseek-chat", 0.27, 1.10},
    {"deepseek-reasoner", 0.55, 2.19},
    {"mistral-large", 2.00, 6.00},
    {"mistral-medium", 0.40, 2.00},
    {"mistral-small", 0.20, 0.60},
    {"codestral", 0.30, 0.90},
    {"grok-4", 3.00, 15.00},
    {"grok-3-mini", 0.30, 0.50},
    {"grok-3", 3.00, 15.00},
    {"grok-2", 2.00, 10.00},
    {"llama-3.3-70b-versatile", 0.59, 0.79},
    {"llama-3.1-8b-instant", 0.05, 0.08},
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// "anthropic/claude-3.5-sonnet" (OpenRouter) -> "claude-3.5-sonnet"; dots in Claude versions as dashes.
std::string bare(const std::string& model) {
  std::string m = lower(model);
  if (auto slash = m.rfind('/'); slash != std::string::npos) m = m.substr(slash + 1);
  if (m.starts_with("claude-")) std::replace(m.begin(), m.end(), '.', '-');
  return m;
}

}  // namespace

std::optional<TokenPrice> known_price(Provider provider, const std::string& model) {
  if (provider == Provider::ollama) return TokenPrice{0, 0};
  std::string m = bare(model);
  for (const auto& row : kPrices) {
    if (!m.starts_with(row.family)) continue;
    // "gpt-4" must not take "gpt-4o-..." nor "o1" take "o1x": the family ends at the name's end or a separator.
    char next = m.size() > row.family.size() ? m[row.family.size()] : '-';
    if (next != '-' && next != ':' && next != '@' && next != '.') continue;
    if (next == '.' && std::isdigit(static_cast<unsigned char>(row.family.back()))) continue;  // gpt-4 vs gpt-4.1
    return TokenPrice{row.input, row.output};
  }
  return std::nullopt;
}

std::optional<TokenPrice> parse_price(const std::string& text) {
  size_t comma = text.find(',');
  if (comma == std::string::npos) return std::nullopt;
  std::string a = text.substr(0, comma), b = text.substr(comma + 1);
  char* end = nullptr;
  double in = std::strtod(a.c_str(), &end);
  if (end == a.c_str() || *end != '\0') return std::nullopt;
  double out = std::strtod(b.c_str(), &end);
  if (end == b.c_str() || *end != '\0') return std::nullopt;
  if (!(in >= 0) || !(out >= 0) || in > 1e6 || out > 1e6) return std::nullopt;
  return TokenPrice{in, out};
}

bool guess_supports_vision(const std::string& model) {
  std::string m = bare(model);
  for (std::string_view p : {"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-5", "o1", "o3", "o4", "gemini",
                             "llava", "bakllava", "llama3.2-vision", "llama-3.2-11b-vision", "llama-3.2-90b-vision",
                             "llama-4", "qwen2-vl", "qwen2.5-vl", "qwen2.5vl", "qwen-vl", "pixtral", "gemma3",
                             "minicpm-v", "moondream", "grok-2-vision", "grok-vision", "grok-4"}) {
    if (m.starts_with(p)) {
      if (m.starts_with("o1-mini") || m.starts_with("o3-mini")) return false;
      return true;
    }
  }
  if (m.starts_with("claude-")) {
    // claude-2 and claude-instant cannot see; claude-3 and every later family (claude-3-5-..., claude-sonnet-4) can.
    return !m.starts_with("claude-2") && !m.starts_with("claude-instant") && !m.starts_with("claude-1");
  }
  return false;
}

double cost_of(const TokenUsage& usage, const TokenPrice& price) {
  return (static_cast<double>(usage.input) * price.input + static_cast<double>(usage.output) * price.output) / 1e6;
}

}  // namespace oishell::agent
