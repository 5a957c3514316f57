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
  for (auto& list : by_first_) list.clear();
  any_first_.clear();
  std::fill(std::begin(class_), std::end(class_), 0);
  for (size_t i = 0; i < needles_.size(); ++i) {
    const Needle& needle = needles_[i];
    if (!needle.any_first) {
      by_first_[static_cast<unsigned char>(needle.value[0])].push_back(i);
      class_[static_cast<unsigned char>(needle.value[0])] |= kLiteralFirst;
    } else {
      any_first_.push_back(i);
      if (needle.value.size() > 1) class_[static_cast<unsigned char>(needle.value[1])] |= kAnySecond;
    }
  }
  for (int c = 0; c < 256; ++c) {
    if (begins_escape(static_cast<char>(c))) class_[c] |= kEscape | kAnySecond;  // an escaped second byte too
    if (!any_first_.empty() && is_base64_char(static_cast<char>(c))) class_[c] |= kBase64First;
  }
  // A pair (a, b) could begin a needle when a is an escape; or a is a needle's first byte (any base64 character for
  // a base64 form's) and b its second, or an escape.
  std::fill(std::begin(pairs_), std::end(pairs_), 0);
  auto set_pair = [&](int a, int b) {
    const size_t bit = static_cast<size_t>(a) << 8 | static_cast<size_t>(b);
    pairs_[bit / 64] |= uint64_t{1} << (bit % 64);
  };
  auto set_first = [&](int a, int second, bool any_second) {
    for (int b = 0; b < 256; ++b) {
      if (any_second || b == second || (class_[b] & kEscape)) set_pair(a, b);
    }
  };
  for (int a = 0; a < 256; ++a) {
    if (class_[a] & kEscape) set_first(a, -1, true);
  }
  for (const Needle& needle : needles_) {
    const bool short_needle = needle.value.size() < 2 || (needle.any_last && needle.value.size() == 2);
    const int second = short_needle ? -1 : static_cast<unsigned char>(needle.value[1]);
    if (!needle.any_first) {
      set_first(static_cast<unsigned char>(needle.value[0]), second, short_needle);
      continue;
    }
    for (int a = 0; a < 256; ++a) {
      if (is_base64_char(static_cast<char>(a))) set_first(a, second, short_needle);
    }
  }
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

size_t SecretScrubber::scrub(std::string& buffer, size_t released, bool final, std::vector<std::string>* found) const {
  if (released >= buffer.size() || needles_.empty()) return buffer.size();
  // An occurrence cannot straddle `released`: the bytes before it were held back until every occurrence that could
  // start among them was whole, and scrubbed then.
  const std::string_view text(buffer);
  size_t at = released;
  const size_t last = text.size() - 1;
  while (at < text.size()) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    while (at < last) {
      const size_t bit = size_t{bytes[at]} << 8 | bytes[at + 1];
      if (pairs_[bit / 64] >> (bit % 64) & 1) break;
      ++at;
    }
    const auto u = static_cast<unsigned char>(text[at]);
    const unsigned char k = class_[u];
    if ((k & (kEscape | kLiteralFirst | kBase64First)) == 0) {
      ++at;
      continue;
    }
    // Most positions start no needle: their byte is no needle's first byte, no escape, and no base64 character
    // followed by what a base64 form's second byte could be.
    const bool escape = (k & kEscape) != 0;
    const bool any_here = (k & kBase64First) != 0 &&
                          (escape || at + 1 >= text.size() || (class_[static_cast<unsigned char>(text[at + 1])] & kAnySecond));
    if (!escape && (k & kLiteralFirst) == 0 && !any_here) {
      ++at;
      continue;
    }
    FirstBytes first;
    if (escape) {
      first = first_bytes(text, at);
      if (first.more && !final) return at;  // an escape cut short: what it spells is not known yet
    } else {
      first.spellings[0] = {u, at + 1};
      first.count = 1;
    }
    // Whether `needle` could start with one of `first`: its first byte, then (when it is there and no escape) its
    // second. Most candidates fail here, before match_encoded.
    auto could_start = [&](const Needle& needle) {
      for (size_t i = 0; i < first.count; ++i) {
        const auto& [value, end] = first.spellings[i];
        if (needle.any_first ? !is_base64_char(static_cast<char>(value)) : value != static_cast<unsigned char>(needle.value[0])) {
          continue;
        }
        if (end >= text.size() || needle.value.size() < 2 || (needle.any_last && needle.value.size() == 2) ||
            begins_escape(text[end]) || text[end] == needle.value[1]) {
          return true;
        }
      }
      return false;
    };
    const Needle* hit = nullptr;
    size_t hit_index = needles_.size(), hit_end = 0;
    auto try_needle = [&](size_t index) {
      const Needle& needle = needles_[index];
      if (!could_start(needle)) return true;
      size_t end = 0;
      const EncodedMatch match = match_encoded(text, at, {needle.value, needle.any_first, needle.any_last}, &end);
      // Held back from here: a stream's next bytes could complete an occurrence (a longer one than a whole match
      // here, too).
      if (match == EncodedMatch::partial && !final) return false;
      if (match == EncodedMatch::whole && index < hit_index) {
        hit = &needle;
        hit_index = index;
        hit_end = end;
      }
      return true;
    };
    bool complete = true;
    if (escape) {
      for (size_t i = 0; i < needles_.size() && complete; ++i) complete = try_needle(i);
    } else {
      for (size_t i : by_first_[u]) {
        if (!(complete = try_needle(i))) break;
      }
      if (any_here) {
        for (size_t i : any_first_) {
          if (!complete) break;
          complete = try_needle(i);
        }
      }
    }
    if (!complete) return at;
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
