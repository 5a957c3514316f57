// Secrets overwritten in what goes back to the sandbox, in every spelling an echo gives them
// (runtime/relay/secret_scrubber.h).
#include "runtime/relay/secret_scrubber.h"

#include <algorithm>
#include <string_view>

#include "base/base64.h"
#include "runtime/relay/encoded_match.h"

namespace oishell::relay {
namespace {

// A secret shorter than this gets no base64 needles: its few characters would turn up in unrelated base64 data.
constexpr size_t kMinBase64Secret = 6;

}  // namespace

void SecretScrubber::add_needle(const std::string& name, std::string value, bool any_first, bool any_last) {
  for (const Needle& needle : needles_) {
    if (needle.value == value && needle.any_first == any_first && needle.any_last == any_last) return;
  }
  needles_.push_back({name, std::move(value), any_first, any_last});
  std::stable_sort(needles_.begin(), needles_.end(),
                   [](const Needle& a, const Needle& b) { return a.value.size() > b.value.size(); });
}

void SecretScrubber::add(const std::string& name, const std::string& value) {
  if (value.empty() || std::find(values_.begin(), values_.end(), value) != values_.end()) return;
  values_.push_back(value);
  add_needle(name, value, false, false);
  if (value.size() < kMinBase64Secret) return;
  // In base64, the value starts 0, 1 or 2 bytes into a 3-byte group. Character i holds bits [6i, 6i + 6) of the
  // encoded bytes: those wholly inside the value are fixed; one that straddles its start or end mixes in bits of
  // the neighbours, and stands for any base64 character (it always exists: bits of the value are in it).
  for (size_t offset = 0; offset < 3; ++offset) {
    const std::string encoded = base64_encode(std::string(offset, '\0') + value);
    const size_t begin_bit = 8 * offset, end_bit = 8 * (offset + value.size());
    const size_t first = begin_bit / 6;             // the character holding the value's first bit
    const size_t last = (end_bit + 5) / 6;          // one past the character holding its last bit
    const bool any_first = begin_bit % 6 != 0, any_last = end_bit % 6 != 0;
    std::string standard = encoded.substr(first, last - first);
    std::string url_safe = standard;
    std::replace(url_safe.begin(), url_safe.end(), '+', '-');
    std::replace(url_safe.begin(), url_safe.end(), '/', '_');
    add_needle(name, std::move(standard), any_first, any_last);
    add_needle(name, std::move(url_safe), any_first, any_last);
  }
}

size_t SecretScrubber::max_held() const {
  size_t longest = 0;
  for (const Needle& needle : needles_) longest = std::max(longest, needle.value.size());
  return longest * kMaxEscapeBytes;
}

// Whether `needle` can start at text[at] at all: its first byte there literally, or an escape; with a wildcard
// first byte, a base64 character followed by the second byte (or an escape). Most positions fail this.
static bool could_start(std::string_view text, size_t at, const std::string& needle, bool any_first) {
  const char c = text[at];
  if (begins_escape(c)) return true;
  if (!any_first) return c == needle[0];
  if (!is_base64_char(c)) return false;
  return at + 1 >= text.size() || text[at + 1] == needle[1] || begins_escape(text[at + 1]);
}

size_t SecretScrubber::scrub(std::string& buffer, size_t released, bool final, std::vector<std::string>* found) const {
  if (released >= buffer.size() || needles_.empty()) return buffer.size();
  // An occurrence cannot straddle `released`: the bytes before it were held back until every occurrence that could
  // start among them was whole, and scrubbed then.
  const std::string_view text(buffer);
  size_t at = released;
  while (at < text.size()) {
    const Needle* hit = nullptr;
    size_t hit_end = 0;
    for (const Needle& needle : needles_) {
      if (!could_start(text, at, needle.value, needle.any_first)) continue;
      size_t end = 0;
      const EncodedMatch match = match_encoded(text, at, {needle.value, needle.any_first, needle.any_last}, &end);
      // Held back from here: a stream's next bytes could complete an occurrence (a longer one than a whole match
      // here, too).
      if (match == EncodedMatch::partial && !final) return at;
      if (match == EncodedMatch::whole && hit == nullptr) {
        hit = &needle;
        hit_end = end;
      }
    }
    if (hit == nullptr) {
      ++at;
      continue;
    }
    std::fill(buffer.begin() + static_cast<std::ptrdiff_t>(at), buffer.begin() + static_cast<std::ptrdiff_t>(hit_end),
              '*');
    if (found) found->push_back(hit->name);
    at = hit_end;
  }
  return buffer.size();
}

}  // namespace oishell::relay
