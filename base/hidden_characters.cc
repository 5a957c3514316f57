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

bool is_pictographic(char32_t cp) {
  struct Range {
    char32_t first, last;
  };
  // In code point order.
  static constexpr Range kPictographs[] = {
      {0x00a9, 0x00a9},   {0x00ae, 0x00ae},   {0x203c, 0x203c},   {0x2049, 0x2049}, {0x2122, 0x2122},
      {0x2139, 0x2139},   {0x2194, 0x21aa},   {0x231a, 0x23ff},   {0x24c2, 0x24c2}, {0x25aa, 0x25fe},
      {0x2600, 0x27bf},   {0x2934, 0x2935},   {0x2b05, 0x2b55},   {0x3030, 0x3030}, {0x303d, 0x303d},
      {0x3297, 0x3297},   {0x3299, 0x3299},   {0x1f000, 0x1faff}, {0x1fc00, 0x1fffd},
  };
  if (cp < kPictographs[0].first) return false;
  for (const Range& r : kPictographs) {
    if (cp < r.first) return false;
    if (cp <= r.last) return true;
  }
  return false;
}

bool joins_emoji(char32_t previous, char32_t cp, char32_t next) {
  constexpr char32_t kVariationSelector16 = 0xfe0f, kZeroWidthJoiner = 0x200d;
  if (cp == kVariationSelector16) return is_pictographic(previous);
  if (cp == kZeroWidthJoiner) {
    return (is_pictographic(previous) || previous == kVariationSelector16) && is_pictographic(next);
  }
  return false;
}

}  // namespace oishell
