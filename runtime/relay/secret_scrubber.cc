#include "runtime/relay/secret_scrubber.h"

#include <algorithm>
#include <string_view>

namespace oishell::relay {

void SecretScrubber::add(const std::string& name, const std::string& value) {
  if (value.empty()) return;
  for (const Needle& needle : needles_) {
    if (needle.value == value) return;
  }
  needles_.push_back({name, value});
  longest_ = std::max(longest_, value.size());
}

size_t SecretScrubber::scrub(std::string& buffer, size_t released, bool final, std::vector<std::string>* found) const {
  if (released >= buffer.size()) return buffer.size();
  if (needles_.empty()) return buffer.size();
  // An occurrence cannot straddle `released`: the bytes before it were held back until every occurrence that could
  // end after them was whole, and scrubbed then.
  for (const Needle& needle : needles_) {
    for (size_t at = buffer.find(needle.value, released); at != std::string::npos;
         at = buffer.find(needle.value, at + needle.value.size())) {
      std::fill_n(buffer.begin() + static_cast<std::ptrdiff_t>(at), needle.value.size(), '*');
      if (found) found->push_back(needle.name);
    }
  }
  if (final) return buffer.size();
  // Held back: the shortest tail that is the start of a secret (a stream's next bytes could complete it). Any other
  // tail goes now, so that a response streamed in pieces (server-sent events) is not delayed.
  const size_t window = std::min(buffer.size() - released, longest_ - 1);
  for (size_t at = buffer.size() - window; at < buffer.size(); ++at) {
    const std::string_view tail = std::string_view(buffer).substr(at);
    for (const Needle& needle : needles_) {
      if (needle.value.size() > tail.size() && std::string_view(needle.value).starts_with(tail)) return at;
    }
  }
  return buffer.size();
}

}  // namespace oishell::relay
