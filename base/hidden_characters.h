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
// (An emoji's U+FE0F or U+200D is hidden too; where an emoji may keep its look, joins_emoji() says which.)
[[nodiscard]] bool is_hidden_character(char32_t cp);

// Pictographs: the emoji and symbols Unicode's Extended_Pictographic covers (its blocks, not its exact list:
// U+00A9, U+00AE, U+203C, U+2049, U+2122, U+2139, U+2194..U+21AA, U+231A..U+23FF, U+24C2, U+25AA..U+25FE,
// U+2600..U+27BF, U+2934, U+2935, U+2B05..U+2B55, U+3030, U+303D, U+3297, U+3299, U+1F000..U+1FAFF,
// U+1FC00..U+1FFFD), and the skin tones U+1F3FB..U+1F3FF.
[[nodiscard]] bool is_pictographic(char32_t cp);

// Whether the hidden character `cp`, between `previous` and `next` (0 at either end of the text), is part of an
// emoji: U+FE0F (emoji presentation) right after a pictograph, and U+200D (zero-width joiner) between two
// pictographs, the first of which may carry its U+FE0F ("👩‍💻", "🏳️‍🌈"). For text that is read, not run (the
// model's prose, a block's output): code shown for confirmation marks these too, every one.
[[nodiscard]] bool joins_emoji(char32_t previous, char32_t cp, char32_t next);

}  // namespace oishell
