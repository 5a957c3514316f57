#pragma once
// Where a byte string occurs in a text that may spell some of its bytes as an escape (issue 33, finding 2): an
// upstream that echoes a request rarely echoes it raw. A JSON body writes "/" as `\/` (PHP) or `<` as `\u003c` (Go),
// a URL or form writes it percent-encoded, an HTML page as an entity. Each byte of the needle may be, independently
// of the others:
//   - itself;
//   - percent-encoded: `%2F` or `%2f`; a space also as `+` (forms);
//   - a JSON or JavaScript escape: `\uXXXX` (hex either case, the value the byte; bytes below 0x80 only, as a higher
//     code point is two bytes in UTF-8), `\xXX`, and `\/`, `\\`, `\"`, `\'` for those four;
//   - an HTML character reference: `&#DDD;`, `&#xHH;` (up to kMaxEntityDigits digits, leading zeros included, the
//     `;` optional as browsers accept it), or a named one for ASCII punctuation (`&sol;`, `&amp;`, `&quot;`...).
// Escapes are not decoded twice (`%252F` is not "/"): one layer of escaping, mixed freely, is what an echo applies.
// Pure functions, no allocation but the small position sets.
#include <array>
#include <cstddef>
#include <string_view>

namespace oishell::relay {

// Digits a numeric HTML reference may have (`&#x000000002F;`): bounds how far a match can reach.
inline constexpr size_t kMaxEntityDigits = 10;
// The longest spelling of one byte (`&#x` + digits + `;`).
inline constexpr size_t kMaxEscapeBytes = 3 + kMaxEntityDigits + 1;

// Whether a byte can begin an escape: '%', '+', '\\', '&'. A position holding neither one of these nor the
// needle's first byte cannot start a match (the scanner's fast path).
bool begins_escape(char c);

// A base64 character, of either alphabet (standard "+/" or URL-safe "-_").
bool is_base64_char(char c);

// What is looked for. `any_first` / `any_last`: the needle's first / last byte stands for any base64 character
// (its value is not compared): the character at either end of an encoded secret that mixes in bits of its
// neighbours, present in every encoding of a text holding the secret, but not known in advance.
struct EncodedNeedle {
  std::string_view bytes;  // not empty
  bool any_first = false;
  bool any_last = false;
};

// The bytes text[at] can stand for (itself, and what an escape beginning there spells), each with where its
// spelling ends, and whether the text ends inside an escape that could begin there. The scanner's filter: a needle
// whose first byte is none of these, or whose second byte is not what follows any of them, cannot start there.
struct FirstBytes {
  struct Spelling {
    unsigned char value;
    size_t end;
  };
  std::array<Spelling, 8> spellings;  // the first `count` are set
  size_t count = 0;
  bool more = false;
};
FirstBytes first_bytes(std::string_view text, size_t at);

enum class EncodedMatch {
  none,     // the needle does not start at `at`
  whole,    // it does: text[at, *end) spells it
  partial   // text ends (or ends inside an escape) while it still could: more bytes decide
};

// Whether `needle` starts at text[at], each byte literal or escaped as above. `*end` (whole only): the end of the
// longest spelling that matches.
EncodedMatch match_encoded(std::string_view text, size_t at, const EncodedNeedle& needle, size_t* end);

}  // namespace oishell::relay
