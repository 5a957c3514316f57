#include "agent/terminal/markdown.h"

namespace oishell::agent {
namespace {
constexpr const char* kBold = "\033[1m";
constexpr const char* kCode = "\033[36m";  // cyan
constexpr const char* kReset = "\033[0m";
}  // namespace

std::string MarkdownStyler::close_all() {
  std::string out;
  if (bold_ || code_ || heading_) out += kReset;
  bold_ = code_ = heading_ = false;
  return out;
}

std::string MarkdownStyler::feed(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (star_) {
      star_ = false;
      if (c == '*' && !code_) {
        bold_ = !bold_;
        out += bold_ ? kBold : kReset;
        if (!bold_ && heading_) out += kBold;
        continue;
      }
      if (line_start_ && c == ' ') {
        out += "• ";
        line_start_ = false;
        continue;
      }
      out.push_back('*');
      line_start_ = false;
    }
    if (c == '\n') {
      out += close_all();
      out.push_back('\n');
      line_start_ = true;
      continue;
    }
    if (line_start_ && c == '#') {
      if (!heading_) out += kBold;
      heading_ = true;
      continue;  // the #s themselves are not shown
    }
    if (line_start_ && heading_ && c == ' ') continue;
    if (c == '*' && !code_) {
      star_ = true;
      continue;
    }
    if (line_start_ && c == '-' ) {
      line_start_ = false;
      out.push_back('-');
      continue;
    }
    line_start_ = false;
    if (c == '`') {
      code_ = !code_;
      out += code_ ? kCode : kReset;
      if (!code_ && (bold_ || heading_)) out += kBold;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string MarkdownStyler::finish() {
  std::string out;
  if (star_) out.push_back('*');
  star_ = false;
  out += close_all();
  line_start_ = true;
  return out;
}

}  // namespace oishell::agent
