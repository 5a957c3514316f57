// Content scrubbed as one stream, framing kept in place (runtime/relay/scrubbed_stream.h).
#include "runtime/relay/scrubbed_stream.h"

namespace oishell::relay {

void ScrubbedStream::framing(std::string_view bytes) {
  if (bytes.empty()) return;
  if (!framing_.empty() && framing_.back().first == content_.size()) {
    framing_.back().second.append(bytes);  // adjacent pieces (a chunk's CRLF and the next size line) join
  } else {
    framing_.emplace_back(content_.size(), std::string(bytes));
  }
}

void ScrubbedStream::release(std::string& out, bool final, std::vector<std::string>* found) {
  const size_t ready = scrubber_.scrub(content_, 0, final, found);
  if (framing_.empty() && ready == content_.size() && out.empty()) {
    out.swap(content_);  // a body streaming through whole: no copy
    content_.clear();
    return;
  }
  size_t from = 0, piece = 0;
  for (; piece < framing_.size() && framing_[piece].first <= ready; ++piece) {
    auto& [before, bytes] = framing_[piece];
    out.append(content_, from, before - from);
    // A chunk line is not content, but an upstream could still put a secret in its extension: found on its own.
    scrubber_.scrub(bytes, 0, true, found);
    out.append(bytes);
    from = before;
  }
  out.append(content_, from, ready - from);
  content_.erase(0, ready);
  framing_.erase(framing_.begin(), framing_.begin() + static_cast<std::ptrdiff_t>(piece));
  for (auto& held : framing_) held.first -= ready;
}

size_t ScrubbedStream::held() const {
  size_t n = content_.size();
  for (const auto& piece : framing_) n += piece.second.size();
  return n;
}

}  // namespace oishell::relay
