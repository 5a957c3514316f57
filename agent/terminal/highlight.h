#pragma once
// Streaming syntax colouring for code blocks: keywords, strings, comments and numbers of Python, shell and
// JavaScript (and a generic fallback), fed in pieces as the model writes the code.
#include <string>
#include <string_view>

namespace oishell::agent {

class Highlighter {
 public:
  explicit Highlighter(std::string language) : language_(std::move(language)) {}
  // Coloured text for `code`; a word at the end of the piece is held until it ends.
  std::string feed(std::string_view code);
  std::string finish();

 private:
  std::string flush_word();
  bool is_keyword(std::string_view word) const;
  bool line_comment_start(char c, char next) const;

  std::string language_;
  std::string word_;
  char quote_ = 0;         // inside a string delimited by this
  bool escaped_ = false;
  bool comment_ = false;   // inside a line comment
  char pending_slash_ = 0; // javascript: a '/' that may start //
  std::string escape_;     // outside strings and comments: from a backslash, what may be an escape (\xNN, \u{...})
};

}  // namespace oishell::agent
