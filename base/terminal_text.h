#pragma once
// Escaping text that comes from inside the sandbox (file paths in warnings, host names in network prompts and
// denial messages, messages) before it is printed on the user's terminal. Such text is chosen by the sandboxed
// code, and a terminal acts on some of the bytes it prints: an ESC or a C1 control starts a sequence that can set
// the clipboard, rename the window or, on some terminals, type into the input; bidi controls reorder what follows
// them, so "deny" can be made to read "allow". This file turns every such byte sequence into a visible escape.
//
// Pure: no I/O, no locale, no global state.
#include <cstddef>
#include <string>
#include <string_view>

namespace oishell {

// `text` made safe to print on a terminal. Escaped, and nothing else:
//  - C0 controls 0x00-0x1f, as \xNN (\x1b for ESC). With keep_newlines, '\n' and '\t' stay as they are, so a
//    multi-line message keeps its lines; '\r' is escaped even then, because it moves back over what was printed.
//  - DEL 0x7f, as \x7f.
//  - Every byte that is not part of valid, shortest-form UTF-8 (stray continuation bytes, including the raw C1
//    controls 0x80-0x9f; overlong forms; surrogates; code points above U+10FFFF; a sequence cut short), as \xNN,
//    one escape per byte.
//  - The C1 controls encoded as UTF-8 (U+0080..U+009F) and the hidden characters of base/hidden_characters.h:
//    the bidi controls that reorder text (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), zero-width
//    characters (U+200B, U+FEFF...), the soft hyphen, fillers, variation selectors and tags, as \u{xxxx} (at least
//    four lowercase hex digits): `cd ./build\u{200b}-cache` is not read as `cd ./build-cache`.
// Printable ASCII and valid UTF-8 text in any script pass byte for byte, so a plain path is printed unchanged.
// A backslash is left alone: the escapes are for reading, not for decoding back, and a path of plain ASCII must
// stay identical. (So "\x1b" in the output may also have been those four characters in the input; it is still
// never an ESC.) The result contains no byte a terminal interprets as a control except, with keep_newlines, LF
// and HT.
//
// With EmojiJoiners::kept (for text that is read, never run: the model's prose, not its code), a U+FE0F after a
// pictograph and a U+200D between two pictographs pass (base/hidden_characters.h, joins_emoji): "👩‍💻" keeps its look.
enum class EmojiJoiners { escaped, kept };
[[nodiscard]] std::string escape_for_terminal(std::string_view text, bool keep_newlines = false,
                                              EmojiJoiners joiners = EmojiJoiners::escaped);

// The length of the valid, shortest-form UTF-8 sequence at the start of `s` (not empty; its first byte >= 0x80) and its
// code point, or 0 when it is not one (overlong forms, surrogates, above U+10FFFF, cut short).
[[nodiscard]] size_t decode_utf8_character(std::string_view s, char32_t* cp);

}  // namespace oishell
