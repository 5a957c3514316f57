// Diagnostic formatting and the "did you mean" suggestion for misspelt keys and values.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "base/edit_distance.h"
#include "policy/policy.h"

namespace oishell::policy {

std::string Diagnostic::format() const {
  std::string out;
  if (!pos.file.empty()) {
    out += pos.file;
    out += ':';
    if (pos.line > 0) out += std::to_string(pos.line) + ":" + std::to_string(pos.column) + ":";
    out += ' ';
  }
  // User text quoted in a message can be long (a 1 MiB scalar); cap each part so a message stays a line.
  auto capped = [](const std::string& s, size_t max) { return s.size() <= max ? s : s.substr(0, max - 3) + "..."; };
  if (!key_path.empty()) out += capped(key_path, 120) + ": ";
  out += capped(message, 240);
  if (!hint.empty()) out += " (" + capped(hint, 200) + ")";
  return out;
}

std::string format_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (!out.empty()) out += '\n';
    out += d.format();
  }
  return out;
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.size() > 64) return {};
  std::string best;
  size_t best_distance = 0;
  std::string w = lower(word);
  for (const auto& c : candidates) {
    // '-' for '_' and case are the commonest slips; they count as no distance.
    std::string normalised = w;
    std::replace(normalised.begin(), normalised.end(), '-', '_');
    size_t d = edit_distance(normalised, c);
    if (best.empty() || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  size_t allowed = std::max<size_t>(2, word.size() / 3);
  if (best.empty() || best_distance > allowed) return {};
  return best;
}

}  // namespace oishell::policy
