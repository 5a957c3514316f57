#pragma once
// Streaming markdown styling for the assistant's prose: `# headings` bold, **bold**, `inline code` in colour,
// list bullets. Works on pieces as they arrive; holds back at most a `*` or a line start.
#include <string>
#include <string_view>

namespace oishell::agent {

class MarkdownStyler {
 public:
  std::string feed(std::string_view text);
  std::string finish();

 private:
  std::string close_all();

  bool line_start_ = true;
  bool heading_ = false;
  bool bold_ = false;
  bool code_ = false;
  bool star_ = false;  // a '*' waiting to see if a second follows
};

}  // namespace oishell::agent
