#include "agent/core/code_fence.h"

#include <cctype>

namespace oishell::agent {
namespace {

constexpr size_t kMaxIndent = 3;

// Where the backticks of a fence start in `line` (after at most three spaces); npos when they cannot.
size_t fence_start(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < kMaxIndent && line[i] == ' ') ++i;
  return i;
}

bool blank(std::string_view s) {
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> opening_fence(std::string_view line) {
  size_t at = fence_start(line);
  if (line.substr(at, 3) != "```") return std::nullopt;
  size_t tag_at = line.find_first_not_of('`', at);
  if (tag_at == std::string_view::npos) return std::string();
  std::string_view tag = line.substr(tag_at);
  size_t b = 0;
  while (b < tag.size() && std::isspace(static_cast<unsigned char>(tag[b]))) ++b;
  tag = tag.substr(b);
  size_t e = tag.find_first_of(" \t\r\n{");
  return std::string(tag.substr(0, e));
}

bool closing_fence(std::string_view line) {
  size_t at = fence_start(line);
  return line.substr(at, 3) == "```" && blank(line.substr(at + 3));
}

bool could_be_fence(std::string_view start) {
  size_t at = fence_start(start);
  if (at == start.size()) return true;  // only spaces so far (at most three)
  std::string_view rest = start.substr(at);
  return rest.size() <= 3 && rest == std::string_view("```").substr(0, rest.size());
}

}  // namespace oishell::agent
