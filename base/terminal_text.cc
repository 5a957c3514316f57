#include "base/terminal_text.h"

#include <cstddef>

#include "base/hidden_characters.h"

namespace oishell {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_byte_escape(std::string& out, unsigned char byte) {
  out += "\\x";
  out.push_back(kHex[byte >> 4]);
  out.push_back(kHex[byte & 0xf]);
}

// \u{xxxx}: at least four digits (five for the tags and the supplementary variation selectors).
void append_code_point_escape(std::string& out, char32_t cp) {
  out += "\\u{";
  int shift = 20;
  while (shift > 12 && (cp >> shift) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) out.push_back(kHex[(cp >> shift) & 0xf]);
  out.push_back('}');
}

// The code points a terminal acts on, and those it draws as nothing or that reorder the text around them.
bool is_control_code_point(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f)  // C1 controls (CSI, OSC, DCS, ST, ...)
         || is_hidden_character(cp);  // bidi controls, zero-width characters, fillers, variation selectors, tags
}

// The code point `s` starts with, or 0 when it starts with ASCII, an invalid sequence or nothing.
char32_t next_code_point(std::string_view s) {
  char32_t cp = 0;
  if (s.empty() || static_cast<unsigned char>(s[0]) < 0x80 || decode_utf8_character(s, &cp) == 0) return 0;
  return cp;
}

}  // namespace

// The ranges of the second byte are those of Unicode's table 3-7: they rule
// out overlong forms (E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and code points above U+10FFFF (F4 90..).
size_t decode_utf8_character(std::string_view s, char32_t* cp) {
  const auto lead = static_cast<unsigned char>(s[0]);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;  // a continuation byte, C0/C1 (overlong two-byte leads) or F5..FF
  }
  if (s.size() < length) return 0;
  char32_t value = lead & (0xff >> (length + 1));
  for (size_t i = 1; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(s[i]);
    if (byte < (i == 1 ? low : 0x80) || byte > (i == 1 ? high : 0xbf)) return 0;
    value = (value << 6) | (byte & 0x3f);
  }
  *cp = value;
  return length;
}

std::string escape_for_terminal(std::string_view text, bool keep_newlines, EmojiJoiners joiners) {
  char32_t previous = 0;  // the code point before this one (0 after ASCII or an invalid byte)
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      const bool kept = (byte >= 0x20 && byte != 0x7f) || (keep_newlines && (byte == '\n' || byte == '\t'));
      if (kept) {
        out.push_back(static_cast<char>(byte));
      } else {
        append_byte_escape(out, byte);
      }
      ++i;
      previous = 0;
      continue;
    }
    char32_t cp = 0;
    const size_t length = decode_utf8_character(text.substr(i), &cp);
    if (length == 0) {
      append_byte_escape(out, byte);  // one byte at a time, so what follows an invalid byte is still read as text
      ++i;
      previous = 0;
      continue;
    }
    const bool emoji = joiners == EmojiJoiners::kept && is_hidden_character(cp) &&
                       joins_emoji(previous, cp, next_code_point(text.substr(i + length)));
    if (is_control_code_point(cp) && !emoji) {
      append_code_point_escape(out, cp);
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
    previous = cp;
  }
  return out;
}

}  // namespace oishell
