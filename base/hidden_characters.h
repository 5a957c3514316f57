#pragma once
// The characters a terminal or a browser draws as nothing, or that silently reorder the text around them: what
// lets `cd ./build<U+200B>-cache` read as `cd ./build-cache`, or a call inside a docstring read as code (Trojan
// Source). Whoever shows text the sandbox or the model chose marks each of them visibly instead
// (base/terminal_text.h for the agent's own lines, base/terminal_filter.h for a block's output).
//
// Pure: no I/O, no locale.

namespace oishell {

// Whether `cp` is one of:
//  - bidi controls: U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069;
//  - zero-width and format characters: U+200B..U+200D, U+2060..U+2064 (and the unassigned U+2065 and deprecated
//    U+206A..U+206F of that block), U+FEFF, the soft hyphen U+00AD, U+034F (combining grapheme joiner), U+180E,
//    U+2028 and U+2029 (line and paragraph separators, a line break to some programs and none to others),
//    U+FFF9..U+FFFB, U+1BCA0..U+1BCA3, U+1D173..U+1D17A;
//  - fillers drawn blank: the Hangul fillers U+115F, U+1160, U+3164, U+FFA0 and the Khmer U+17B4, U+17B5;
//  - variation selectors: U+180B..U+180D, U+180F, U+FE00..U+FE0F, U+E0100..U+E01EF;
//  - tags: U+E0000..U+E007F.
// (An emoji's U+FE0F or U+200D is marked too: the marks cost a program's emoji their look, which is the price of
// never letting a hidden one through.)
[[nodiscard]] bool is_hidden_character(char32_t cp);

}  // namespace oishell
