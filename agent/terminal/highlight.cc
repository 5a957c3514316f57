#include "agent/terminal/highlight.h"

#include <algorithm>
#include <utility>

namespace oishell::agent {
namespace {

constexpr const char* kHighlightReset = "\033[0m";
constexpr const char* kKeyword = "\033[35m";  // magenta
constexpr const char* kString = "\033[32m";   // green
constexpr const char* kComment = "\033[90m";  // grey
constexpr const char* kNumber = "\033[33m";   // yellow
// An escape of escape_for_terminal (a control or a hidden character in the model's code): reverse video, which no
// block output can draw, so that `cd ./build\u{200b}-cache` stands out as something that is not plain text.
constexpr const char* kEscape = "\033[7m";

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool hex_digit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// Whether `s` (from a backslash) is an escape of escape_for_terminal so far, and whether it is complete.
enum class EscapeMatch { no, prefix, complete };
EscapeMatch match_escape(std::string_view s) {
  if (s.size() >= 2 && s[1] == 'x') {  // \xNN
    for (size_t i = 2; i < s.size(); ++i) {
      if (!hex_digit(s[i])) return EscapeMatch::no;
    }
    return s.size() == 4 ? EscapeMatch::complete : s.size() < 4 ? EscapeMatch::prefix : EscapeMatch::no;
  }
  if (s.size() >= 2 && s[1] == 'u') {  // \u{xxxx}
    if (s.size() >= 3 && s[2] != '{') return EscapeMatch::no;
    for (size_t i = 3; i < s.size(); ++i) {
      if (s[i] == '}' && i == s.size() - 1 && i >= 7) return EscapeMatch::complete;  // four digits or more
      if (!hex_digit(s[i]) || i > 8) return EscapeMatch::no;
    }
    return EscapeMatch::prefix;
  }
  return s.size() == 1 ? EscapeMatch::prefix : EscapeMatch::no;
}

}  // namespace

bool Highlighter::is_keyword(std::string_view w) const {
  static const char* const kPython[] = {"def", "class", "return", "if", "elif", "else", "for", "while", "in", "import",
                                        "from", "as", "with", "try", "except", "finally", "raise", "lambda", "None",
                                        "True", "False", "and", "or", "not", "is", "pass", "break", "continue",
                                        "yield", "async", "await", "global", "nonlocal", "print"};
  static const char* const kShell[] = {"if", "then", "else", "elif", "fi", "for", "while", "do", "done", "case",
                                       "esac", "in", "function", "return", "export", "local", "echo", "cd", "set"};
  static const char* const kJs[] = {"function", "return", "if", "else", "for", "while", "const", "let", "var", "new",
                                    "class", "import", "export", "from", "async", "await", "try", "catch", "throw",
                                    "null", "undefined", "true", "false", "this", "typeof"};
  auto has = [w](const auto& list) {
    return std::any_of(std::begin(list), std::end(list), [w](const char* k) { return w == k; });
  };
  if (language_ == "python") return has(kPython);
  if (language_ == "shell") return has(kShell);
  if (language_ == "javascript") return has(kJs);
  return has(kPython) || has(kJs);
}

bool Highlighter::line_comment_start(char c, char /*next*/) const {
  if (language_ == "javascript") return false;  // handled via pending_slash_
  return c == '#';
}

std::string Highlighter::flush_word() {
  if (word_.empty()) return {};
  std::string out;
  if (is_keyword(word_)) out = std::string(kKeyword) + word_ + kHighlightReset;
  else if (std::isdigit(static_cast<unsigned char>(word_[0]))) out = std::string(kNumber) + word_ + kHighlightReset;
  else out = word_;
  word_.clear();
  return out;
}

std::string Highlighter::feed(std::string_view code) {
  std::string out;
  for (char c : code) {
    if (pending_slash_) {
      pending_slash_ = 0;
      if (c == '/') {
        comment_ = true;
        out += std::string(kComment) + "//";
        continue;
      }
      out.push_back('/');
    }
    if (comment_) {
      if (c == '\n') {
        out += kHighlightReset;
        comment_ = false;
      }
      out.push_back(c);
      continue;
    }
    if (!escape_.empty()) {
      escape_.push_back(c);
      const EscapeMatch match = match_escape(escape_);
      if (match == EscapeMatch::complete) {
        out += std::string(kEscape) + escape_ + kHighlightReset;
        escape_.clear();
      }
      if (match != EscapeMatch::no) continue;
      escape_.pop_back();  // not an escape: the text so far as it is, and `c` read afresh
      out += std::exchange(escape_, {});
    }
    if (quote_) {
      out.push_back(c);
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == quote_ || (c == '\n' && quote_ != '`' && language_ != "python")) {
        quote_ = 0;
        out += kHighlightReset;
      }
      continue;
    }
    if (word_char(c)) {
      word_.push_back(c);
      continue;
    }
    out += flush_word();
    if (c == '\\') {
      escape_ = "\\";
      continue;
    }
    if (c == '"' || c == '\'' || (c == '`' && language_ == "javascript")) {
      quote_ = c;
      out += kString;
      out.push_back(c);
    } else if (language_ == "javascript" && c == '/') {
      pending_slash_ = '/';
    } else if (line_comment_start(c, 0)) {
      comment_ = true;
      out += kComment;
      out.push_back(c);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string Highlighter::finish() {
  std::string out = flush_word() + std::exchange(escape_, {});
  if (pending_slash_) out.push_back('/');
  if (comment_ || quote_) out += kHighlightReset;
  comment_ = false;
  quote_ = 0;
  pending_slash_ = 0;
  return out;
}

}  // namespace oishell::agent
