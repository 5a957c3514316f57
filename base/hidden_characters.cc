#include "base/hidden_characters.h"

namespace oishell {

bool is_hidden_character(char32_t cp) {
  struct Range {
    char32_t first, last;
  };
  // In code point order.
  static constexpr Range kHidden[] = {
      {0x00ad, 0x00ad},    // soft hyphen
      {0x034f, 0x034f},    // combining grapheme joiner
      {0x061c, 0x061c},    // arabic letter mark
      {0x115f, 0x1160},    // hangul choseong and jungseong fillers
      {0x17b4, 0x17b5},    // khmer inherent vowels
      {0x180b, 0x180f},    // mongolian variation selectors and vowel separator
      {0x200b, 0x200f},    // zero width space, non-joiner, joiner; LRM, RLM
      {0x2028, 0x202e},    // line and paragraph separators; LRE, RLE, PDF, LRO, RLO
      {0x2060, 0x206f},    // word joiner, invisible operators, isolates, deprecated format characters
      {0x3164, 0x3164},    // hangul filler
      {0xfe00, 0xfe0f},    // variation selectors
      {0xfeff, 0xfeff},    // zero width no-break space (byte order mark)
      {0xffa0, 0xffa0},    // halfwidth hangul filler
      {0xfff9, 0xfffb},    // interlinear annotation
      {0x1bca0, 0x1bca3},  // shorthand format controls
      {0x1d173, 0x1d17a},  // musical symbol format controls
      {0xe0000, 0xe007f},  // tags
      {0xe0100, 0xe01ef},  // variation selectors supplement
  };
  if (cp < kHidden[0].first) return false;  // ASCII and most text: one comparison
  for (const Range& r : kHidden) {
    if (cp < r.first) return false;
    if (cp <= r.last) return true;
  }
  return false;
}

}  // namespace oishell
