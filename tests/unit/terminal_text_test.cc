// escape_for_terminal: every byte sequence a terminal acts on becomes a visible escape (C0, DEL, raw and encoded
// C1, invalid UTF-8, bidi controls); printable ASCII and valid UTF-8 in any script pass byte for byte.
#include "base/terminal_text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

namespace oishell {
namespace {

std::string byte_escape(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

// The UTF-8 encoding of a code point from U+0080.
std::string utf8(char32_t cp) {
  std::string s;
  if (cp < 0x800) {
    s.push_back(static_cast<char>(0xc0 | (cp >> 6)));
  } else if (cp < 0x10000) {
    s.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
  } else {
    s.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
  }
  s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  return s;
}

TEST(EscapeForTerminalTest, PlainAsciiPathsPassByteForByte) {
  for (const std::string path : {"/home/user/project/src/main.cc", "relative/dir with spaces/file-1_2.txt",
                                 "C:\\windows\\style", "~/.config/x?*[]{}'\"`$!#%&()+,;<=>@^|", ""}) {
    EXPECT_EQ(escape_for_terminal(path), path);
    EXPECT_EQ(escape_for_terminal(path, /*keep_newlines=*/true), path);
  }
  std::string every_printable;
  for (int c = 0x20; c < 0x7f; ++c) every_printable.push_back(static_cast<char>(c));
  EXPECT_EQ(escape_for_terminal(every_printable), every_printable);
}

TEST(EscapeForTerminalTest, ValidUtf8InAnyScriptPasses) {
  for (const std::string text : {"café naïve", "日本語のファイル.txt", "Ελληνικά", "Русский", "עברית", "العربية",
                                 "हिन्दी", "한국어", "emoji 🙂👍🏽", "\u00a0nbsp",
                                 "\u061b arabic semicolon, \u202f narrow nbsp",
                                 "max \U0010FFFD and \uFFFD"}) {
    EXPECT_EQ(escape_for_terminal(text), text) << text;
  }
}

TEST(EscapeForTerminalTest, EveryC0ControlIsEscaped) {
  for (int c = 0; c < 0x20; ++c) {
    const std::string in = std::string("a") + static_cast<char>(c) + "b";
    EXPECT_EQ(escape_for_terminal(in), "a" + byte_escape(static_cast<unsigned char>(c)) + "b") << c;
    const bool kept = c == '\n' || c == '\t';
    EXPECT_EQ(escape_for_terminal(in, /*keep_newlines=*/true),
              kept ? in : "a" + byte_escape(static_cast<unsigned char>(c)) + "b")
        << c;
  }
  EXPECT_EQ(escape_for_terminal("line\r\nnext", true), "line\\x0d\nnext");  // CR moves back over the line
}

TEST(EscapeForTerminalTest, DelIsEscaped) { EXPECT_EQ(escape_for_terminal("a\x7f" "b"), "a\\x7fb"); }

TEST(EscapeForTerminalTest, EscapeSequencesBecomeVisible) {
  EXPECT_EQ(escape_for_terminal("evil\x1b]52;c;aGVsbG8=\x07name"), "evil\\x1b]52;c;aGVsbG8=\\x07name");
  EXPECT_EQ(escape_for_terminal("\x1b[2J\x1b[31mred"), "\\x1b[2J\\x1b[31mred");
  EXPECT_EQ(escape_for_terminal("\x1bP+q\x1b\\"), "\\x1bP+q\\x1b\\");
}

TEST(EscapeForTerminalTest, RawC1BytesAreEscaped) {
  for (int c = 0x80; c <= 0x9f; ++c) {
    const std::string in = std::string("a") + static_cast<char>(c) + "b";
    EXPECT_EQ(escape_for_terminal(in), "a" + byte_escape(static_cast<unsigned char>(c)) + "b") << c;
  }
  EXPECT_EQ(escape_for_terminal("\x9d" "52;c;?\x9c"), "\\x9d52;c;?\\x9c");
}

TEST(EscapeForTerminalTest, Utf8EncodedC1ControlsAreEscaped) {
  for (char32_t cp = 0x80; cp <= 0x9f; ++cp) {
    char expected[16];
    std::snprintf(expected, sizeof expected, "a\\u{%04x}b", static_cast<unsigned>(cp));
    EXPECT_EQ(escape_for_terminal("a" + utf8(cp) + "b"), expected) << static_cast<unsigned>(cp);
  }
  EXPECT_EQ(escape_for_terminal("\xc2\x9d" "52;c;?\xc2\x9c"), "\\u{009d}52;c;?\\u{009c}");
  // The neighbours: U+00A0 and U+007E are text.
  EXPECT_EQ(escape_for_terminal("~\u00a0"), "~\u00a0");
}

TEST(EscapeForTerminalTest, BidiControlsAreEscaped) {
  for (char32_t cp : {0x061cU, 0x200eU, 0x200fU, 0x202aU, 0x202bU, 0x202cU, 0x202dU, 0x202eU, 0x2066U, 0x2067U,
                      0x2068U, 0x2069U}) {
    char expected[16];
    std::snprintf(expected, sizeof expected, "\\u{%04x}", static_cast<unsigned>(cp));
    EXPECT_EQ(escape_for_terminal(utf8(cp)), expected) << static_cast<unsigned>(cp);
  }
  // "deny" reversed to read "allow"-like text is shown with its override visible.
  EXPECT_EQ(escape_for_terminal("file\u202etxt.exe"), "file\\u{202e}txt.exe");
  // Neighbours that are neither reordering controls nor hidden characters pass.
  for (char32_t cp : {0x061bU, 0x061dU, 0x200aU, 0x2010U, 0x2027U, 0x202fU, 0x2070U}) {
    EXPECT_EQ(escape_for_terminal(utf8(cp)), utf8(cp)) << static_cast<unsigned>(cp);
  }
}

TEST(EscapeForTerminalTest, HiddenCharactersAreEscaped) {
  // Issue 34: `cd ./build<U+200B>-cache` looked like `cd ./build-cache` in the code shown for confirmation.
  EXPECT_EQ(escape_for_terminal("cd ./build\u200b-cache && rm -rf ./*"), "cd ./build\\u{200b}-cache && rm -rf ./*");
  for (char32_t cp : {0x00adU, 0x034fU, 0x115fU, 0x1160U, 0x17b4U, 0x180eU, 0x200bU, 0x200cU, 0x200dU, 0x2028U,
                      0x2029U, 0x2060U, 0x2061U, 0x2064U, 0x2065U, 0x206aU, 0x206fU, 0x3164U, 0xfe00U, 0xfe0fU,
                      0xfeffU, 0xffa0U, 0xfff9U}) {
    char expected[16];
    std::snprintf(expected, sizeof expected, "a\\u{%04x}b", static_cast<unsigned>(cp));
    EXPECT_EQ(escape_for_terminal("a" + utf8(cp) + "b"), expected) << static_cast<unsigned>(cp);
  }
  for (char32_t cp : {0xe0001U, 0xe0041U, 0xe007fU, 0xe0100U, 0xe01efU, 0x1bca0U, 0x1d173U}) {
    char expected[16];
    std::snprintf(expected, sizeof expected, "\\u{%05x}", static_cast<unsigned>(cp));
    EXPECT_EQ(escape_for_terminal(utf8(cp)), expected) << static_cast<unsigned>(cp);
  }
  // Their neighbours, and text in any script, pass.
  for (char32_t cp : {0x00acU, 0x00aeU, 0x034eU, 0x2000U, 0xfe10U, 0xfefeU, 0xe0080U, 0xe01f0U, 0x1f642U}) {
    EXPECT_EQ(escape_for_terminal(utf8(cp)), utf8(cp)) << static_cast<unsigned>(cp);
  }
  EXPECT_EQ(escape_for_terminal("héllo 日本"), "héllo 日本");
  // By default an emoji sequence's joiner is shown too (code to confirm: never a hidden one through); text that is
  // read, not run, keeps an emoji's own joiners and no others.
  EXPECT_EQ(escape_for_terminal("ZWJ 👩\u200d💻"), "ZWJ 👩\\u{200d}💻");
  EXPECT_EQ(escape_for_terminal("ZWJ 👩\u200d💻 ❤\ufe0f a\u200d💻 👩\u200db x\ufe0f", false, EmojiJoiners::kept),
            "ZWJ 👩\u200d💻 ❤\ufe0f a\\u{200d}💻 👩\\u{200d}b x\\u{fe0f}");
}

TEST(EscapeForTerminalTest, InvalidUtf8IsEscapedByteByByte) {
  struct Case {
    std::string in, out;
  };
  const Case cases[] = {
      {"\xa0", "\\xa0"},                                 // stray continuation byte
      {"\xbf\x80", "\\xbf\\x80"},                        // two of them
      {"\xc0\xaf", "\\xc0\\xaf"},                        // overlong '/'
      {"\xc1\xbf", "\\xc1\\xbf"},                        // overlong
      {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},               // overlong three-byte '/'
      {"\xe0\x9f\xbf", "\\xe0\\x9f\\xbf"},               // overlong below U+0800
      {"\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf"},      // overlong four-byte '/'
      {"\xf0\x8f\xbf\xbf", "\\xf0\\x8f\\xbf\\xbf"},      // overlong below U+10000
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},               // surrogate U+D800
      {"\xed\xbf\xbf", "\\xed\\xbf\\xbf"},               // surrogate U+DFFF
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},      // above U+10FFFF
      {"\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80"},      // F5..FF never lead
      {"\xff\xfe", "\\xff\\xfe"},                        //
      {"ok\xe2\x82", "ok\\xe2\\x82"},                    // cut short at the end
      {"\xe2\x82" "A", "\\xe2\\x82A"},                   // cut short by ASCII: the ASCII stays
      {"\xe2\x82\xe2\x82\xac", "\\xe2\\x82\u20ac"},      // cut short by a valid character: it stays
      {"\xc3" "\xc3\xa9", "\\xc3\u00e9"},                //
      {"\xc2\x1b[31m", "\\xc2\\x1b[31m"},                // the ESC after a cut lead is still escaped
  };
  for (const Case& c : cases) EXPECT_EQ(escape_for_terminal(c.in), c.out) << c.out;
}

// Whether `s` is valid UTF-8 with no code point a terminal acts on: only printable ASCII (plus, when allowed, LF
// and HT) and non-control code points.
bool is_inert(const std::string& s, bool allow_newlines) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && !(allow_newlines && (c == '\n' || c == '\t'))) || c == 0x7f) return false;
      ++i;
      continue;
    }
    const size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (length == 0 || i + length > s.size()) return false;
    char32_t cp = c & (0xff >> (length + 1));
    for (size_t k = 1; k < length; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    const char32_t min = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    if (cp <= 0x9f || cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
        (cp >= 0x2066 && cp <= 0x2069)) {
      return false;
    }
    i += length;
  }
  return true;
}

TEST(EscapeForTerminalTest, RandomBytesComeOutInertAndEscapingAgainChangesNothing) {
  std::mt19937 rng(20240611);
  // Biased towards the interesting bytes: controls, C1, UTF-8 leads and continuations, bidi prefixes.
  const std::string interesting = "\x1b\x07\x9b\x9d\x9c\xc2\xe2\x80\x8e\x8f\xaa\xae\xa6\xa9\xd8\x9c\xed\xa0\xf0\xf4"
                                  "\x90\xff\n\t\r\\[]";
  for (int round = 0; round < 3000; ++round) {
    std::string in;
    const size_t length = rng() % 64;
    for (size_t i = 0; i < length; ++i) {
      in.push_back(rng() % 2 ? interesting[rng() % interesting.size()] : static_cast<char>(rng() % 256));
    }
    for (const bool keep : {false, true}) {
      const std::string out = escape_for_terminal(in, keep);
      ASSERT_TRUE(is_inert(out, keep)) << escape_for_terminal(in) << " -> " << escape_for_terminal(out);
      ASSERT_EQ(escape_for_terminal(out, keep), out) << escape_for_terminal(in);
    }
  }
}

}  // namespace
}  // namespace oishell
