#include "base/markdown_fence.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace oishell {
namespace {

constexpr std::string_view kImgTag = "<img";

// Whether `text` begins with `prefix` (lower case), letters of `text` in any case.
bool starts_with_any_case(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// How many bytes at the end of `text` could begin an image once the next chunk comes: a `!`, or a start of `<img`.
size_t undecided_tail(std::string_view text) {
  if (text.ends_with('!')) return 1;
  for (size_t n = std::min(text.size(), kImgTag.size() - 1); n > 0; --n) {
    if (starts_with_any_case(text.substr(text.size() - n), kImgTag.substr(0, n))) return n;
  }
  return 0;
}

}  // namespace

std::string fence_for(std::string_view text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

std::string fenced_markdown(std::string_view info, std::string_view text) {
  const std::string fence = fence_for(text);
  std::string out = fence;
  out.append(info).append("\n").append(text);
  if (!text.empty() && text.back() != '\n') out += '\n';
  return out + fence;
}

std::string FencedStream::feed(std::string_view chunk) {
  std::string out;
  out.reserve(chunk.size());
  for (char c : chunk) {
    if (at_line_start_) {
      if (c == ' ' && leading_spaces_ < 4) {
        ++leading_spaces_;
      } else {
        if (c == '`' && leading_spaces_ < 4) out.append(4 - leading_spaces_, ' ');
        at_line_start_ = false;
      }
    }
    if (c == '\n' || c == '\r') {  // CommonMark ends a line at either
      at_line_start_ = true;
      leading_spaces_ = 0;
    }
    out += c;
  }
  return out;
}

std::string ImageBreaker::feed(std::string_view chunk) {
  std::string text = std::exchange(held_, std::string());
  text.append(chunk);
  const size_t decided = text.size() - undecided_tail(text);
  held_ = text.substr(decided);
  std::string out;
  out.reserve(decided + 8);
  for (size_t i = 0; i < decided; ++i) {
    const std::string_view rest = std::string_view(text).substr(i);
    if (rest.starts_with("![")) {
      out += "!\\";  // `!\[`: the characters, not an image
      continue;
    }
    if (starts_with_any_case(rest, kImgTag)) {
      out += "&lt;";  // an HTML <img> drawn as text
      continue;
    }
    out += text[i];
  }
  return out;
}

std::string ImageBreaker::finish() { return std::exchange(held_, std::string()); }

std::string quoted_markdown(std::string_view text) {
  ImageBreaker breaker;
  std::string out = "> ";
  for (char c : breaker.feed(text) + breaker.finish()) {
    if (c == '\r') continue;
    out += c;
    if (c == '\n') out += "> ";
  }
  return out;
}

}  // namespace oishell
