#include "runtime/relay/secret_scrubber.h"

#include <algorithm>

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
  const size_t hold = longest_ - 1;
  return buffer.size() - released > hold ? buffer.size() - hold : released;
}

}  // namespace oishell::relay
