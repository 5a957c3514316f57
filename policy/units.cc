// Size and duration parsing: see units.h.
#include "policy/units.h"

#include <cctype>
#include <string>

namespace oishell::policy {
namespace {

bool mul_add(uint64_t& acc, uint64_t value, uint64_t unit) {
  uint64_t product;
  if (__builtin_mul_overflow(value, unit, &product)) return false;
  return !__builtin_add_overflow(acc, product, &acc);
}

// Reads digits at `i`; false when there are none or they overflow.
bool read_number(std::string_view text, size_t& i, uint64_t& out) {
  size_t start = i;
  out = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    if (__builtin_mul_overflow(out, 10, &out) || __builtin_add_overflow(out, text[i] - '0', &out)) return false;
    ++i;
  }
  return i > start;
}

}  // namespace

std::optional<uint64_t> parse_size(std::string_view text) {
  size_t i = 0;
  uint64_t n;
  if (!read_number(text, i, n)) return std::nullopt;
  while (i < text.size() && text[i] == ' ') ++i;
  std::string_view unit = text.substr(i);
  struct Unit {
    std::string_view name;
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"B", 1},
      {"KiB", 1ull << 10},
      {"MiB", 1ull << 20},
      {"GiB", 1ull << 30},
      {"TiB", 1ull << 40},
      {"KB", 1000ull},
      {"kB", 1000ull},
      {"MB", 1000ull * 1000},
      {"GB", 1000ull * 1000 * 1000},
      {"TB", 1000ull * 1000 * 1000 * 1000},
  };
  for (const auto& u : kUnits) {
    if (unit == u.name) {
      uint64_t total = 0;
      if (!mul_add(total, n, u.factor)) return std::nullopt;
      return total;
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> parse_duration_ms(std::string_view text) {
  struct Unit {
    std::string_view name;
    uint64_t ms;
  };
  // Longest names first so "ms" is not read as "m".
  static constexpr Unit kUnits[] = {{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}};
  if (text.empty()) return std::nullopt;
  uint64_t total = 0;
  uint64_t last_unit = UINT64_MAX;
  size_t i = 0;
  while (i < text.size()) {
    uint64_t n;
    if (!read_number(text, i, n)) return std::nullopt;
    const Unit* found = nullptr;
    for (const auto& u : kUnits) {
      if (text.substr(i, u.name.size()) == u.name) {
        found = &u;
        break;
      }
    }
    if (!found || found->ms >= last_unit) return std::nullopt;  // a unit is required; largest first, each once
    i += found->name.size();
    last_unit = found->ms;
    if (!mul_add(total, n, found->ms)) return std::nullopt;
  }
  return total;
}

std::string format_size(uint64_t bytes) {
  static constexpr const char* kNames[] = {"TiB", "GiB", "MiB", "KiB"};
  static constexpr uint64_t kFactors[] = {1ull << 40, 1ull << 30, 1ull << 20, 1ull << 10};
  for (int i = 0; i < 4; ++i) {
    if (bytes >= kFactors[i] && bytes % kFactors[i] == 0) {
      return std::to_string(bytes / kFactors[i]) + " " + kNames[i];
    }
  }
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

std::string format_duration_ms(uint64_t ms) {
  if (ms == 0) return "0s";
  std::string out;
  uint64_t parts[] = {ms / 86'400'000, ms / 3'600'000 % 24, ms / 60'000 % 60, ms / 1000 % 60, ms % 1000};
  const char* names[] = {"d", "h", "m", "s", "ms"};
  for (int i = 0; i < 5; ++i) {
    if (parts[i]) out += std::to_string(parts[i]) + names[i];
  }
  return out;
}

}  // namespace oishell::policy
