// TerminalOutputFilter: what a full-screen program needs passes byte for byte; sequences that reach beyond the
// screen (clipboard, files, reports into the input, passthrough) are dropped whole, in their 7-bit, raw 8-bit and
// UTF-8 encoded C1 forms, wherever the stream is cut into chunks. Without the filter, every "dropped" case below
// would reach the user's terminal as written.
#include "base/terminal_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace oishell {
namespace {

using Scope = TerminalOutputFilter::Scope;

// The whole stream in one chunk.
std::string filter(std::string_view in, Scope scope = Scope::kScreen) {
  TerminalOutputFilter f(scope);
  std::string out = f.feed(in);
  return out + f.finish();
}

// One byte per chunk.
std::string filter_bytewise(std::string_view in, Scope scope = Scope::kScreen) {
  TerminalOutputFilter f(scope);
  std::string out;
  for (char c : in) out += f.feed(std::string_view(&c, 1));
  return out + f.finish();
}

// Two chunks, cut at `at`.
std::string filter_cut(std::string_view in, size_t at, Scope scope = Scope::kScreen) {
  TerminalOutputFilter f(scope);
  std::string out = f.feed(in.substr(0, at));
  out += f.feed(in.substr(at));
  return out + f.finish();
}

// Readable bytes for failure messages.
std::string show(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(ch);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

// `in` gives `expected` in one chunk, byte by byte, and cut in two at every position.
void expect_filtered(std::string_view in, std::string_view expected, Scope scope = Scope::kScreen) {
  SCOPED_TRACE("input: " + show(in));
  EXPECT_EQ(show(filter(in, scope)), show(expected));
  EXPECT_EQ(show(filter_bytewise(in, scope)), show(expected));
  for (size_t at = 0; at <= in.size(); ++at) {
    ASSERT_EQ(show(filter_cut(in, at, scope)), show(expected)) << "cut at " << at;
  }
}

void expect_passes(std::string_view in) { expect_filtered(in, in); }

// `sequence` is dropped whole, with the text around it kept.
void expect_dropped(std::string_view sequence) {
  expect_filtered("before" + std::string(sequence) + "after", "beforeafter");
}

// ---- what passes ----

TEST(TerminalFilterTest, TextUtf8AndTheScreenC0ControlsPass) {
  expect_passes("hello, world\r\n");
  expect_passes("tab\there\vvt\fff\bbs\abel\x0eshift out\x0fshift in");
  expect_passes("héllo 日本語 Ελληνικά עברית 🙂👍🏽 \u00a0\u00ad\U0010FFFD");
  expect_passes("✜ (E2 9C 9C: continuation bytes that are C1 values on their own)");
}

TEST(TerminalFilterTest, OtherC0ControlsAndDelAreDropped) {
  for (int c = 0; c < 0x20; ++c) {
    if ((c >= 0x07 && c <= 0x0f) || c == 0x1b) continue;
    expect_filtered(std::string("a") + static_cast<char>(c) + "b", "ab");
  }
  expect_filtered("a\x7f" "b", "ab");
}

TEST(TerminalFilterTest, VimLikeScreenPassesByteForByte) {
  const std::string screen =
      "\x1b[?1049h\x1b[22;0;0t"  // alternate screen; the title-stack push is the one part dropped
      "\x1b[?1h\x1b=\x1b[?2004h\x1b[1;24r\x1b[?12h\x1b[?12l\x1b[27m\x1b[23m\x1b[29m\x1b[m\x1b[H\x1b[2J"
      "\x1b[?25l\x1b[24;1H\"main.cc\" 42L, 1337B\x1b[1;1H"
      "\x1b[38;5;130m  1 \x1b[m\x1b[38;5;81m#include\x1b[m \x1b[38;5;130m<string>\x1b[m\r\n"
      "\x1b[38;2;255;0;0mtrue colour\x1b[m \x1b[38:2::0:255:0mcolon form\x1b[m \x1b[4:3mundercurl\x1b[4:0m\r\n"
      "\x1b[94m~                                                                               \x1b[m\r\n"
      "\x1b(0lqqk\x1b(B box \x1b)0\x0eq\x0f\x1b#8\x1b" "7\x1b[5;5H\x1b" "8\x1bM\x1b" "D\x1b" "E\x1bH"
      "\x1b[K\x1b[1J\x1b[3L\x1b[2M\x1b[4@\x1b[2P\x1b[10X\x1b[5S\x1b[2T\x1b[3g\x1b[6n\x1b[c\x1b[>c\x1b[?u\x1b[>1u"
      "\x1b[2 q\x1b[?1000h\x1b[?1006h\x1b[?1004h\x1b[?2026h\x1b[?2026l\x1b[!p\x1b[?7$p\x1b>\x1b" "c"
      "\x1b[?25h\x1b[?1049l";
  // The one window operation (push title) is dropped; everything else passes unchanged.
  const char* const push_title = "\x1b[22;0;0t";
  std::string expected = screen;
  expected.erase(expected.find(push_title), std::strlen(push_title));
  expect_filtered(screen, expected);
  expect_passes(expected);
}

TEST(TerminalFilterTest, TestRunnerColoursAndCursorMovesPass) {
  expect_passes("\x1b[32m\x1b[1mPASSED\x1b[0m tests/test_x.py::test_a \x1b[31mFAILED\x1b[0m\r\n");
  expect_passes("\x1b[1A\x1b[2K\x1b[1G[=====>    ] 50%\x1b[0K\r\x1b[10C\x1b[3D\x1b[s\x1b[u");
}

TEST(TerminalFilterTest, PlainEscapeSequencesPass) {
  for (const char* seq : {"\x1b" "7", "\x1b" "8", "\x1b" "c", "\x1b=", "\x1b>", "\x1b" "D", "\x1b" "E", "\x1b" "H",
                          "\x1bM", "\x1bN", "\x1bO", "\x1bn", "\x1bo", "\x1b|", "\x1b}", "\x1b~", "\x1b#3", "\x1b#4",
                          "\x1b#5", "\x1b#6", "\x1b#8", "\x1b(B", "\x1b(0", "\x1b)0", "\x1b*A", "\x1b+<", "\x1b-A",
                          "\x1b.F", "\x1b/A", "\x1b(%5", "\x1b(\">"}) {
    expect_passes(std::string("x") + seq + "y");
  }
}

TEST(TerminalFilterTest, OtherEscapeSequencesAreDropped) {
  // ESC % @ would take the terminal out of UTF-8, where C3 9D (U+00DD) ends in an 8-bit OSC.
  for (const char* seq : {"\x1b%@", "\x1b%G", "\x1b \x46", "\x1b G", "\x1bZ", "\x1b\\", "\x1b" "a", "\x1b#9",
                          "\x1b(((B", "\x1b!@"}) {
    expect_dropped(seq);
  }
}

TEST(TerminalFilterTest, HyperlinksPass) {
  expect_passes("\x1b]8;id=x1;https://example.com/a?b=c\x1b\\link text\x1b]8;;\x1b\\");
  expect_passes("\x1b]8;;file:///work/main/README.md\alink\x1b]8;;\a");
}

TEST(TerminalFilterTest, TitlesPassWithTheirTerminator) {
  expect_passes("\x1b]0;vim main.cc\a");
  expect_passes("\x1b]2;заголовок ✜ 🙂\x1b\\");
  expect_passes("\x1b]1;icon\a");
}

TEST(TerminalFilterTest, EveryAllowlistedOscPasses) {
  for (const char* number : {"0", "1", "2", "4", "7", "8", "10", "11", "12", "17", "19", "104", "110", "111", "112",
                             "117", "119", "133"}) {
    expect_passes(std::string("\x1b]") + number + ";payload\a");
    expect_passes(std::string("\x1b]") + number + ";?\x1b\\");
  }
  // The resets are often written without a ';'.
  for (const char* reset : {"104", "110", "111", "112", "117", "119"}) {
    expect_passes(std::string("\x1b]") + reset + "\a");
  }
  expect_passes("\x1b]4;1;rgb:ff/00/00\x1b\\\x1b]7;file://host/work\a\x1b]133;A\a$ \x1b]133;B\a");
}

TEST(TerminalFilterTest, EightBitCsiAndOscAreForwardedInSevenBitForm) {
  expect_filtered("\x9b" "1;31mred", "\x1b[1;31mred");
  expect_filtered("\xc2\x9b" "2J", "\x1b[2J");
  expect_filtered("\x9d" "0;title\x9c", "\x1b]0;title\x1b\\");
  expect_filtered("\xc2\x9d" "2;title\xc2\x9c", "\x1b]2;title\x1b\\");
  expect_filtered("\x9d" "8;;https://x/\a", "\x1b]8;;https://x/\a");
  // A 7-bit OSC ended by an 8-bit ST.
  expect_filtered("\x1b]0;t\x9c", "\x1b]0;t\x1b\\");
  expect_filtered("\x1b]0;t\xc2\x9c", "\x1b]0;t\x1b\\");
}

// ---- what is dropped ----

TEST(TerminalFilterTest, Osc52IsDroppedInEveryForm) {
  const char* const forms[] = {
      "\x1b]52;c;aGVsbG8=\a",           // set, BEL
      "\x1b]52;c;aGVsbG8=\x1b\\",       // set, ST
      "\x1b]52;c;?\a",                  // query: the clipboard would be typed into the input
      "\x1b]52;;?\x1b\\",               //
      "\x9d" "52;c;aGVsbG8=\a",         // raw 8-bit OSC
      "\x9d" "52;c;?\x9c",              // raw 8-bit OSC and ST
      "\xc2\x9d" "52;c;aGVsbG8=\a",     // UTF-8 encoded OSC
      "\xc2\x9d" "52;c;?\xc2\x9c",      // UTF-8 encoded OSC and ST
      "\x1b]52;c;?\xc2\x9c",            // 7-bit OSC, encoded ST
      "\x1b]052;c;?\a",                 // leading zero: terminals read 52
      "\x1b]4294967348;c;?\a",          // 2^32 + 52
  };
  for (const char* form : forms) expect_dropped(form);
}

TEST(TerminalFilterTest, OscOutsideTheAllowlistIsDropped) {
  for (const char* osc : {"\x1b]50;fixed\a", "\x1b]50;?\a",                                     // font
                          "\x1b]1337;File=name=eA==;inline=1:aGk=\a", "\x1b]1337;CurrentDir=/\a",  // iTerm2
                          "\x1b]5113;ac=recv;id=1\x1b\\", "\x1b]5522;type=read\x1b\\",            // kitty
                          "\x1b]9;notify\a", "\x1b]777;notify;a;b\a", "\x1b]3;x=y\a", "\x1b]5;1;red\a",
                          "\x1b]46;/tmp/log\a", "\x1b];no number\a", "\x1b]\a", "\x1b]x;1\a", "\x1b]+52;c;?\a",
                          "\x1b]0x1;t\a", "\x1b]1000;t\a", "\x1b]01;t\a", "\x1b]104x\a"}) {
    expect_dropped(osc);
  }
}

TEST(TerminalFilterTest, ControlsInAnAllowedOscPayloadDropIt) {
  expect_dropped("\x1b]0;a\nb\a");
  expect_dropped("\x1b]0;a\rb\x1b\\");
  expect_dropped("\x1b]2;a\x7f" "b\a");
  expect_dropped("\x1b]0;bad \xff utf8\a");
  expect_dropped("\x1b]0;cut \xe2\x82 utf8\a");
}

TEST(TerminalFilterTest, DcsSosPmApcAreDroppedWhole) {
  expect_dropped("\x1bP$qm\x1b\\");                                   // DECRQSS: echoes "m" into the input
  expect_dropped("\x1bP$q\"p\x1b\\");                                 //
  expect_dropped("\x1bPq#0;2;0;0;0#0~~@@vv@@~~\x1b\\");               // Sixel
  expect_dropped("\x1bP+q544e\x1b\\");                                // XTGETTCAP
  expect_dropped("\x1b_Gf=100,t=f;L2V0Yy9wYXNzd2Q=\x1b\\");           // kitty graphics from a host file
  expect_dropped("\x1b_Ga=T,f=24,s=1,v=1;AAAA\x1b\\");                //
  expect_dropped("\x1b^private message\x1b\\");                       // PM
  expect_dropped("\x1bXstart of string\x1b\\");                       // SOS
  expect_dropped("\x90" "$qm\x9c");                                   // raw 8-bit DCS
  expect_dropped("\x9f" "Gf=100,t=f;L2V0Yy9wYXNzd2Q=\x9c");           // raw 8-bit APC
  expect_dropped("\x9e" "pm\x9c");                                    //
  expect_dropped("\x98" "sos\x9c");                                   //
  expect_dropped("\xc2\x90" "$qm\xc2\x9c");                           // UTF-8 encoded DCS
  expect_dropped("\xc2\x9f" "Gf=100;AAAA\xc2\x9c");                   // UTF-8 encoded APC
  // BEL does not end a DCS: the string runs on to its ST.
  expect_dropped("\x1bPq\abel\x1b\\");
  // UTF-8 in an ignored string is skipped, and E2 9C 9C is a character, not ST.
  expect_dropped("\x1bPq ✜ still inside\x1b\\");
}

TEST(TerminalFilterTest, TmuxPassthroughOfOsc52IsDropped) {
  // tmux unwraps this and sends the OSC 52 to the outer terminal. Here the doubled ESC abandons the DCS, the OSC 52
  // inside is read as one and dropped, and the final ST is a stray one.
  expect_dropped("\x1bPtmux;\x1b\x1b]52;c;aGVsbG8=\a\x1b\\");
  expect_dropped("\x1bPtmux;\x1b\x1b]52;c;?\x1b\x1b\\\x1b\\");
  expect_dropped("\x1bPtmux;\x1b\x1b_Gf=100,t=f;L2V0Yw==\x1b\x1b\\\x1b\\");
}

TEST(TerminalFilterTest, WindowOperationsAreAllDropped) {
  for (const char* csi : {"\x1b[21t", "\x1b[20t", "\x1b[19t", "\x1b[18t", "\x1b[14t", "\x1b[13t", "\x1b[11t",
                          "\x1b[8;24;80t", "\x1b[3;0;0t", "\x1b[22;0t", "\x1b[23;0t", "\x1b[t", "\x1b[>2t",
                          "\x1b[ t", "\x1b[1;2;3 t", "\x9b" "21t", "\xc2\x9b" "21t"}) {
    expect_dropped(csi);
  }
  expect_passes("\x1b[2T\x1b[>T");  // the neighbour: T (scroll down, reset title modes) passes
}

TEST(TerminalFilterTest, ScreenReadbackPrintingAndVt52ModeAreDropped) {
  expect_dropped("\x1b[1;1;1;1;24;80*y");  // DECRQCRA: checksum of what is on the screen
  expect_dropped("\x1b[5i");               // media copy: printer controller on
  expect_dropped("\x1b[0i");
  expect_dropped("\x1b[?5i");
  expect_dropped("\x1b[?2l");              // DECANM: VT52 mode
  expect_dropped("\x1b[?1;2l");
  expect_dropped("\x1b[?02l");
  expect_dropped("\x1b[?65538l");          // too large to be sure it is not read as 2
  // Neighbours that pass: other modes, ANSI mode 2, other y and i sequences.
  expect_passes("\x1b[?1l\x1b[?25l\x1b[?1049l\x1b[?12;25l\x1b[2l\x1b[?2h\x1b[1y\x1b[1$i");
}

TEST(TerminalFilterTest, OtherC1ControlsAreDroppedRawAndEncoded) {
  for (int c = 0x80; c <= 0x9f; ++c) {
    if (c == 0x90 || c == 0x98 || c == 0x9b || c == 0x9d || c == 0x9e || c == 0x9f) continue;  // introducers
    expect_filtered(std::string("a") + static_cast<char>(c) + "b", "ab");
    expect_filtered(std::string("a\xc2") + static_cast<char>(c) + "b", "ab");
  }
}

TEST(TerminalFilterTest, InvalidUtf8BecomesReplacementCharacters) {
  const std::string fffd = "\uFFFD";
  expect_filtered("a\xff" "b", "a" + fffd + "b");
  expect_filtered("\xa0", fffd);                              // stray continuation
  expect_filtered("\xc0\xaf", fffd + fffd);                   // overlong '/'
  expect_filtered("\xe0\xa0\xaf\xe0" "A", "\u082f" + fffd + "A");  // E0 A0 AF is the smallest after E0
  expect_filtered("\xed\xa0\xa0", fffd + fffd + fffd);        // surrogate
  expect_filtered("\xf4\xa0\xa0\xa0", fffd + fffd + fffd + fffd);  // above U+10FFFF
  expect_filtered("\xe2\x82" "A", fffd + "A");                // one per maximal subpart
  expect_filtered("\xf0\x9f\x99" "\xe2\x82\xac", fffd + "\u20ac");
  expect_filtered("cut at the end \xf0\x9f\x99", "cut at the end " + fffd);
  // A cut character is ended by the ESC that follows, which still starts a sequence.
  expect_filtered("\xe2\x1b[31mx", fffd + "\x1b[31mx");
}

TEST(TerminalFilterTest, RawC1AfterACutCharacterIsStillAC1Control) {
  // E0 cannot be followed by 80 (that would be overlong), so E0 is cut short there and 0x80 is a raw C1 control
  // outside UTF-8: dropped. Likewise F4 90 is beyond U+10FFFF, and 0x90 is then a raw DCS, which runs to its ST.
  const std::string fffd = "\uFFFD";
  expect_filtered("\xe0\x80\xaf", fffd + fffd);
  expect_filtered("\xed\xa0\x80", fffd + fffd);
  expect_filtered("a\xf4\x90" "bcd\x1b\\e", "a" + fffd + "e");
  expect_filtered("a\xf4\x9d" "52;c;?\a" "e", "a" + fffd + "e");
  // But as a continuation byte of a valid character (U+00DD is C3 9D), it is text.
  expect_passes("\xc3\x9d" "52;c;?");
}

TEST(TerminalFilterTest, UnterminatedSequencesAreDroppedAtFinish) {
  for (const char* tail : {"\x1b]0;title never ended", "\x1b]52;c;aGk=", "\x1b[1;3", "\x1b", "\x1b(", "\x1bPq#0",
                           "\x1b]0;t\x1b", "\x9d" "0;t", "\xc2"}) {
    TerminalOutputFilter f;
    EXPECT_EQ(f.feed(std::string("kept") + tail), "kept") << show(tail);
    const bool cut_character = std::string_view(tail) == "\xc2";
    EXPECT_EQ(f.finish(), cut_character ? "\uFFFD" : "") << show(tail);
    EXPECT_EQ(f.pending_bytes(), 0u);
    EXPECT_EQ(f.feed("again\x1b[1m"), "again\x1b[1m");  // back to its initial state
  }
}

TEST(TerminalFilterTest, OverLongOscIsDroppedWholeAndTheBoundIsExact) {
  const size_t payload_room = TerminalOutputFilter::kMaxOscBytes - 4;  // after "ESC ] 0 ;"
  const std::string longest = "\x1b]0;" + std::string(payload_room, 't') + "\a";
  EXPECT_EQ(filter(longest), longest);
  EXPECT_EQ(filter_bytewise(longest), longest);
  const std::string too_long = "\x1b]0;" + std::string(payload_room + 1, 't') + "\a";
  EXPECT_EQ(filter("a" + too_long + "b"), "ab");
  EXPECT_EQ(filter_bytewise("a" + too_long + "b"), "ab");
  // A hyperlink of a megabyte is not held.
  TerminalOutputFilter f;
  EXPECT_EQ(f.feed("x\x1b]8;;https://e.com/"), "x");
  for (int i = 0; i < 1024; ++i) {
    EXPECT_EQ(f.feed(std::string(1024, 'u')), "");
    ASSERT_LE(f.pending_bytes(), TerminalOutputFilter::kMaxOscBytes);
  }
  EXPECT_EQ(f.feed("\x1b\\link\x1b]8;;\x1b\\"), "link\x1b]8;;\x1b\\");
  EXPECT_EQ(f.finish(), "");
}

TEST(TerminalFilterTest, OverLongCsiIsDroppedWholeAndTheBoundIsExact) {
  // ESC [ + params + final: kMaxCsiBytes in all.
  const std::string longest = "\x1b[" + std::string(TerminalOutputFilter::kMaxCsiBytes - 3, '1') + "m";
  ASSERT_EQ(longest.size(), TerminalOutputFilter::kMaxCsiBytes);
  expect_passes(longest);
  const std::string too_long = "\x1b[" + std::string(TerminalOutputFilter::kMaxCsiBytes - 2, '1') + "m";
  expect_dropped(too_long);
  EXPECT_EQ(filter("a\x1b[" + std::string(100'000, ';') + "mb"), "ab");
}

TEST(TerminalFilterTest, MalformedCsiIsDroppedToItsFinalByte) {
  expect_dropped("\x1b[1$2p");   // a parameter after an intermediate
  expect_dropped("\x1b[1?2h");   // a private marker after the first parameter byte
  expect_passes("\x1b[?2004h\x1b[>4;2m\x1b[=1c\x1b[<1u");
}

TEST(TerminalFilterTest, CanAndSubAbortAnySequence) {
  expect_filtered("\x1b[1\x18m", "m");  // the CSI is gone; 'm' is text again
  expect_filtered("\x1b[31\x1am", "m");
  expect_filtered("\x1b\x18" "7", "7");
  expect_filtered("\x1b(\x1a" "B", "B");
  expect_filtered("\x1b]0;ti\x18tle\a", "tle\a");
  expect_filtered("\x1b]52;c;\x1a" "aGk=\a", "aGk=\a");  // the rest of an aborted OSC 52 is plain text
  expect_filtered("\x1bPq#0\x1a rest", " rest");
  expect_filtered("\x1b_Gf=100\x18 rest", " rest");
  expect_filtered("\x9d" "52;c;?\x18 rest", " rest");
}

TEST(TerminalFilterTest, EscInsideAStringEndsItOnlyAsSt) {
  expect_filtered("\x1b]0;ti\x1b[1mtle\a", "\x1b[1mtle\a");  // the OSC is abandoned; the CSI is read
  expect_filtered("\x1bPxx\x1b[2Jafter", "\x1b[2Jafter");
  expect_filtered("\x1b_G\x1b\x1b]0;t\a", "\x1b]0;t\a");     // ESC ESC: the second one starts the OSC
  expect_filtered("\x1b]0;t\x1b\\ok", "\x1b]0;t\x1b\\ok");
  expect_filtered("\x1b]52;c;\x1b]0;t\a", "\x1b]0;t\a");      // one OSC abandoned for another
}

TEST(TerminalFilterTest, C1InsideASequenceAbandonsItAndIsReadAfresh) {
  expect_filtered("\x1b]0;t\x9b" "1m", "\x1b[1m");
  expect_filtered("\x1b[1;\x9b" "2J", "\x1b[2J");
  expect_filtered("\x1b[1;\xc2\x9d" "52;c;?\a", "");
  expect_filtered("\x1b\x9d" "0;t\a", "\x1b]0;t\a");
  expect_filtered("\x1bPq\x9d" "0;t\a", "\x1b]0;t\a");
  expect_filtered("\x1b[1é", "é");  // text inside a CSI abandons it too
}

TEST(TerminalFilterTest, C0ControlsInsideACsiAreExecutedBeforeIt) {
  expect_filtered("\x1b[1\r\nA", "\r\n\x1b[1A");
  expect_filtered("\x1b[1\x7f" "m", "\x1b[1m");  // DEL is ignored
  expect_filtered("\x1b[1\x01m", "\x1b[1m");     // other C0 controls are dropped
}

TEST(TerminalFilterTest, MemoryStaysBoundedForAnyInput) {
  TerminalOutputFilter f;
  std::mt19937 rng(7);
  const std::string starts[] = {"\x1b]0;", "\x1b]8;;", "\x1bP", "\x1b_", "\x1b[", "\x9d" "2;", "\x1b]52;c;"};
  for (const std::string& start : starts) {
    (void)f.feed(start);
    for (int i = 0; i < 300; ++i) {
      std::string chunk(rng() % 4096, 'a');
      (void)f.feed(chunk);
      ASSERT_LE(f.pending_bytes(), TerminalOutputFilter::kMaxOscBytes + 3);
    }
    (void)f.feed("\x18");
    EXPECT_EQ(f.pending_bytes(), 0u);
  }
}

// ---- randomised ----

// Whether `out` is valid UTF-8 with no C1 control in any form.
bool valid_utf8_without_c1(std::string_view out) {
  for (size_t i = 0; i < out.size();) {
    const auto c = static_cast<unsigned char>(out[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    const size_t length = c >= 0xf5 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (length == 0 || i + length > out.size()) return false;
    char32_t cp = c & (0xff >> (length + 1));
    for (size_t k = 1; k < length; ++k) {
      const auto b = static_cast<unsigned char>(out[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    const char32_t min = length == 2 ? 0xa0 : length == 3 ? 0x800 : 0x10000;  // 0xa0: no U+0080..U+009F
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += length;
  }
  return true;
}

TEST(TerminalFilterTest, RandomBytesInRandomChunksNeverLetAForbiddenSequenceThrough) {
  std::mt19937 rng(0x5eed);
  // Pieces of sequences, so that random input often forms (and breaks) real ones.
  const std::vector<std::string> pieces = {
      "\x1b", "\x1b]", "\x1b]52;", "\x1b]52;c;", "52;", "\x1b]0;", "\x1b]8;;", "\x1b[", "\x1bP", "\x1b_", "\x1b^",
      "\x1bX", "\x1b\\", "\a", "\x18", "\x1a", "\x9b", "\x9c", "\x9d", "\x90", "\x98", "\x9e", "\x9f", "\xc2\x9d",
      "\xc2\x9c", "\xc2\x9b", "\xc2\x90", "\xc2", "\xe2\x9c", "\xe2\x82\xac", "21t", "1;31m", "?2l", "?", ";", "5",
      "2", "t", "m", "\\", "]", "[", "P", "_", "tmux;", "\x1b%@", "\xf0\x9f\x99\x82", "\x7f", "\r\n"};
  int forwarded_osc = 0, forwarded_csi = 0, dropped_something = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string in;
    const int parts = static_cast<int>(rng() % 40);
    for (int p = 0; p < parts; ++p) {
      if (rng() % 3 == 0) {
        in.push_back(static_cast<char>(rng() % 256));
      } else {
        in += pieces[rng() % pieces.size()];
      }
    }
    SCOPED_TRACE("input: " + show(in));

    const std::string whole = filter(in);
    TerminalOutputFilter f;
    std::string chunked;
    for (size_t at = 0; at < in.size();) {
      const size_t n = std::min<size_t>(1 + rng() % 8, in.size() - at);
      chunked += f.feed(std::string_view(in).substr(at, n));
      ASSERT_LE(f.pending_bytes(), TerminalOutputFilter::kMaxOscBytes + 3);
      at += n;
    }
    chunked += f.finish();
    ASSERT_EQ(show(chunked), show(whole));

    for (const char* forbidden : {"\x1b]52", "\x1bP", "\x1b_", "\x1b^", "\x1bX", "\x1b%"}) {
      ASSERT_EQ(whole.find(forbidden), std::string::npos) << show(forbidden) << " in " << show(whole);
    }
    ASSERT_TRUE(valid_utf8_without_c1(whole)) << show(whole);
    // What passed is what the filter passes again: the terminal parses it into the same approved sequences.
    ASSERT_EQ(show(filter(whole)), show(whole));
    forwarded_osc += whole.find("\x1b]") != std::string::npos;
    forwarded_csi += whole.find("\x1b[") != std::string::npos;
    dropped_something += whole.size() < in.size();
  }
  // The input is not so random that nothing is ever forwarded or dropped.
  EXPECT_GT(forwarded_osc, 50);
  EXPECT_GT(forwarded_csi, 500);
  EXPECT_GT(dropped_something, 2000);
}

// ---- the inline scope: a block's output among the agent's own lines (issue 34) ----
// Without the scope (as the agent filtered until then), every "dropped" sequence below passed as written: a block
// set the background colour of the text and printed a fake question, redrew its own code above it, cleared the
// scrollback, and hid a zero-width space in a path.

void expect_inline(std::string_view in, std::string_view expected) { expect_filtered(in, expected, Scope::kInline); }
void expect_inline_passes(std::string_view in) { expect_inline(in, in); }
void expect_inline_dropped(std::string_view sequence) {
  expect_inline("before" + std::string(sequence) + "after", "beforeafter");
}

TEST(TerminalFilterInlineTest, ColoursProgressBarsNewlinesAndTextPass) {
  expect_inline_passes("\x1b[31mred\x1b[0m \x1b[1;32mPASSED\x1b[m plain\r\n");
  expect_inline_passes("héllo 日本 Ελληνικά עברית 🙂👍🏽 \u00a0\n");
  expect_inline_passes("\r[===>      ] 30%\r[======>   ] 60%\x1b[K\r\x1b[2K\x1b[1G[==========] 100%\n");
  expect_inline_passes("\x1b[?25l\r 50%\x1b[0K\x1b[10C\x1b[3D\x1b[5G\x1b[2X\x1b[P\x1b[@\x1b[?25h\n");
  expect_inline_passes("\x1b[38;5;130mindexed\x1b[39m \x1b[38;2;255;0;0mtrue\x1b[m \x1b[38:2::0:255:0mcolon\x1b[m");
  expect_inline_passes("\x1b[1m\x1b[2m\x1b[3m\x1b[4m\x1b[4:3m\x1b[9m\x1b[22;23;24;29m\x1b[49m\x1b[90;97m");
  expect_inline_passes("tab\there\bbs\abel\x1b" "D\x1b" "E\x1b[B\x1b[2E\x1b[J\x1b[0J\x1b[I\x1b[Z");
  expect_inline_passes("\x1b(0lqqk\x1b(B \x1b)0\x0eq\x0f\x1b=\x1b>");  // character sets: the reset undoes them
}

TEST(TerminalFilterInlineTest, ColourAndPaletteOscAreDropped) {
  // OSC 4 (palette), 10 11 12 17 19 (foreground, background, cursor, highlight colours), set or queried: a block
  // made the text the background's colour, and no SGR reset restores a palette.
  for (const char* osc : {"\x1b]4;7;rgb:00/00/00\a", "\x1b]10;#000000\x1b\\", "\x1b]11;#000000\a",
                          "\x1b]11;?\a", "\x1b]12;black\a", "\x1b]17;#000\a", "\x1b]19;#000\a", "\x9d" "11;#000\x9c",
                          "\xc2\x9d" "10;#000\xc2\x9c", "\x1b]104\a", "\x1b]110\a"}) {
    expect_inline_dropped(osc);
  }
  // The neighbours around them are untouched.
  expect_inline("\x1b[31mred\x1b]11;#ff0000\a\x1b[0m héllo 日本\n", "\x1b[31mred\x1b[0m héllo 日本\n");
}

TEST(TerminalFilterInlineTest, HyperlinksTitlesAndOtherOscAreDropped) {
  // An unclosed hyperlink turned the agent's next question into a link.
  expect_inline("\x1b]8;;https://attacker.example/\x1b\\click\x1b]8;;\x1b\\ me", "click me");
  expect_inline("\x1b]8;id=1;https://x/\aopen", "open");
  for (const char* osc : {"\x1b]0;title\a", "\x1b]1;icon\x1b\\", "\x1b]2;title\a", "\x1b]7;file://h/w\a",
                          "\x1b]133;A\a", "\x1b]52;c;eA==\a"}) {
    expect_inline_dropped(osc);
  }
}

TEST(TerminalFilterInlineTest, NothingMovesAboveTheOutputOrErasesTheScreenOrScrollback) {
  // A block redrew its own code above it as harmless code: up, absolute positions, erasing the screen above and
  // the scrollback, scrolling, scroll regions, saved positions.
  for (const char* seq : {"\x1b[A", "\x1b[5A", "\x1b[F", "\x1b[3F", "\x1b[H", "\x1b[1;1H", "\x1b[10;5f", "\x1b[3d",
                          "\x1b[1J", "\x1b[2J", "\x1b[3J", "\x1b[L", "\x1b[M", "\x1b[S", "\x1b[2T", "\x1b[1;5r",
                          "\x1b[s", "\x1b[u", "\x1b" "7", "\x1b" "8", "\x1bM", "\x1b" "c", "\x1b#8", "\x1b#3",
                          "\x9b" "A", "\xc2\x9b" "3J", "\x1b[?6h", "\x1b[?69h", "\x1b[?45h"}) {
    expect_inline_dropped(seq);
  }
  // Moves within the line and down, and erasing below the cursor, stay (the neighbours).
  expect_inline("line\x1b[A\x1b[2K\rredrawn\x1b[B\n", "line\x1b[2K\rredrawn\x1b[B\n");
}

TEST(TerminalFilterInlineTest, EveryModeAndReportIsDroppedButTheCursorsVisibility) {
  for (const char* seq : {"\x1b[?1049h", "\x1b[?47h", "\x1b[?1047h", "\x1b[?2026h", "\x1b[?1000h", "\x1b[?2004h",
                          "\x1b[?5h", "\x1b[?7l", "\x1b[?1h", "\x1b[4h", "\x1b[12l", "\x1b[20h", "\x1b[3g",
                          "\x1b" "H", "\x1b[2 q", "\x1b[!p", "\x1b[>4;2m", "\x1b[6n", "\x1b[c", "\x1b[>c",
                          "\x1b[?u", "\x1b[>1u", "\x1b[?25;1049h", "\x1b[?7$p", "\x1b[22;0;0t", "\x1b[5i",
                          "\x1b[b", "\x1b[x"}) {
    expect_inline_dropped(seq);
  }
  expect_inline_passes("\x1b[?25lworking\x1b[?25h");
}

TEST(TerminalFilterInlineTest, SgrKeepsForegroundAttributesAndLosesReverseHiddenAndBackgrounds) {
  // The agent's marks are reverse video (cells with a background): no output can draw one, nor hide text.
  for (const char* sgr : {"\x1b[7m", "\x1b[8m", "\x1b[41m", "\x1b[107m", "\x1b[48;5;1m", "\x1b[48;2;0;0;0m",
                          "\x1b[48:2::0:0:0m", "\x1b[58;5;1m", "\x1b[10m", "\x1b[7;8;41m"}) {
    expect_inline_dropped(sgr);
  }
  expect_inline("\x1b[1;7;31;47mx", "\x1b[1;31mx");
  expect_inline("\x1b[0;48;5;2;32mx", "\x1b[0;32mx");
  expect_inline("\x1b[48;2;1;2;3;38;2;4;5;6mx", "\x1b[38;2;4;5;6mx");
  expect_inline("\x1b[48:5:1;4:3mx", "\x1b[4:3mx");
  // An extended colour cut short, or a parameter too long to read alike everywhere: dropped whole.
  expect_inline_dropped("\x1b[31;38;5m");
  expect_inline_dropped("\x1b[38;2;1;2m");
  expect_inline_dropped("\x1b[38;9;1m");
  expect_inline_dropped("\x1b[1;00007m");
  expect_inline_passes("\x1b[m\x1b[;1m");
}

TEST(TerminalFilterInlineTest, HiddenCharactersAreMarked) {
  // `cd ./build<U+200B>-cache` looked like `cd ./build-cache`.
  expect_inline("cd ./build\u200b-cache", "cd ./build<U+200B>-cache");
  expect_inline("a\u200c\u200d\u2060\u2064\ufeff\u00adb", "a<U+200C><U+200D><U+2060><U+2064><U+FEFF><U+00AD>b");
  expect_inline("\u3164\u115f\uffa0\ufe0f", "<U+3164><U+115F><U+FFA0><U+FE0F>");
  expect_inline("\U000E0041\U000E007F\U000E0100", "<U+E0041><U+E007F><U+E0100>");
  expect_inline("deny\u202eyolla\u202c \u2066x\u2069", "deny<U+202E>yolla<U+202C> <U+2066>x<U+2069>");
  // Their neighbours in the code point table are ordinary text.
  expect_inline_passes("\u200a\u2010\u2027\u2030\u205f\ufe10\ufefe\U000E0080é日");
  // The screen scope leaves them alone (a full-screen program draws them as the terminal does).
  expect_passes("a\u200bb");
}

// Output is read, never run: an emoji keeps its U+FE0F after a pictograph and its U+200D between two pictographs,
// also when a chunk ends at the joiner; a joiner anywhere else, and every other hidden character, is marked.
TEST(TerminalFilterInlineTest, AnEmojisOwnJoinersPassAndNoOthers) {
  expect_inline("\U0001F469\u200d\U0001F4BB \u2764\ufe0f \U0001F3F3\ufe0f\u200d\U0001F308",
                "\U0001F469\u200d\U0001F4BB \u2764\ufe0f \U0001F3F3\ufe0f\u200d\U0001F308");
  expect_inline("a\u200db \U0001F469\u200dx \U0001F469\u200d\x1b[31m\U0001F4BB a\ufe0f \U0001F469\u200b",
                "a<U+200D>b \U0001F469<U+200D>x \U0001F469<U+200D>\x1b[31m\U0001F4BB a<U+FE0F> \U0001F469<U+200B>");
  TerminalOutputFilter f(TerminalOutputFilter::Scope::kInline);
  std::string out = f.feed("\U0001F469\u200d");
  EXPECT_EQ(f.pending_bytes(), 3u);  // the joiner waits for what follows
  out += f.feed("\U0001F4BB \U0001F469\u200d");
  out += f.finish();
  EXPECT_EQ("\U0001F469\u200d\U0001F4BB \U0001F469<U+200D>", out);
}

// What the inline scope forwarded, read as a terminal reads it: the reason it is not allowed, or "" when each
// sequence is one the scope lets through.
std::string inline_violation(std::string_view out) {
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != '\x1b') continue;
    if (i + 1 >= out.size()) return "a lone ESC at the end";
    const char next = out[i + 1];
    if (next == ']' || next == 'P' || next == '_' || next == '^' || next == 'X') return "a control string";
    if (next != '[') {
      size_t j = i + 1;
      while (j < out.size() && out[j] >= 0x20 && out[j] <= 0x2f) ++j;
      if (j >= out.size()) return "a cut ESC sequence";
      const std::string_view intermediates = out.substr(i + 1, j - i - 1);
      if (intermediates.empty() && std::string_view("=>DENOno|}~").find(out[j]) == std::string_view::npos)
        return "ESC " + std::string(1, out[j]);
      if (!intermediates.empty() && std::string_view("()*+-./").find(intermediates[0]) == std::string_view::npos)
        return "ESC " + std::string(intermediates);
      continue;
    }
    size_t j = i + 2;
    while (j < out.size() && !(out[j] >= 0x40 && out[j] <= 0x7e)) ++j;
    if (j >= out.size()) return "a cut CSI";
    const std::string_view params = out.substr(i + 2, j - i - 2);
    const char final_byte = out[j];
    if (params == "?25" && (final_byte == 'h' || final_byte == 'l')) continue;
    if (params.find_first_not_of("0123456789;:") != std::string_view::npos) return "CSI " + std::string(params);
    if (final_byte == 'J' && !(params.empty() || params == "0")) return "ED " + std::string(params);
    if (std::string_view("mCDG`aBEIZKXP@J").find(final_byte) == std::string_view::npos)
      return "CSI ... " + std::string(1, final_byte);
    if (final_byte != 'm') continue;
    // SGR: no reverse video, hidden text or background; an extended colour is a foreground one.
    size_t pos = 0;
    while (pos <= params.size()) {
      size_t end = std::min(params.find(';', pos), params.size());
      std::string_view field = params.substr(pos, end - pos);
      std::string_view head = field.substr(0, field.find(':'));
      pos = end + 1;
      int n = head.empty() ? 0 : std::stoi(std::string(head));
      if (n == 7 || n == 8 || (n >= 40 && n <= 48) || (n >= 100 && n <= 107) || n == 58)
        return "SGR " + std::string(params);
      if (n == 38 && head.size() == field.size()) {  // ;5;N or ;2;R;G;B: skip the colour's own numbers
        size_t kind_end = std::min(params.find(';', pos), params.size());
        const bool indexed = params.substr(pos, kind_end - pos) == "5";
        for (int k = indexed ? 2 : 4; k > 0 && pos <= params.size(); --k)
          pos = std::min(params.find(';', pos), params.size()) + 1;
      }
    }
  }
  return "";
}

TEST(TerminalFilterInlineTest, RandomBytesInRandomChunksNeverLetASequenceOutsideTheScopeThrough) {
  std::mt19937 rng(0x1e34);
  const std::vector<std::string> pieces = {
      "\x1b", "\x1b]", "\x1b]11;", "\x1b]8;;", "\x1b]4;1;", "#000", "\x1b[", "\x1b[?", "\x9b", "\xc2\x9b", "\x9d",
      "\x9c", "\a", "\x1b\\", "A", "H", "J", "3J", "2J", "K", "m", "7", "8", "41", "48;5;1", "38;2;1;2;3", "38;5",
      ";", ":", "?25", "?1049", "h", "l", "M", "c", "r", "s", "u", "\x1b" "7", "\x1bM", "\x1b#8", "\x1b(0", "\x18",
      "\xe2\x80\x8b", "\xe2\x80\xae", "\xef\xbb\xbf", "\xf3\xa0\x81\x81", "\xe2\x80", "\r", "\n", "é", "日"};
  int forwarded_csi = 0, marked = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string in;
    const int parts = static_cast<int>(rng() % 40);
    for (int p = 0; p < parts; ++p) {
      if (rng() % 4 == 0) {
        in.push_back(static_cast<char>(rng() % 256));
      } else {
        in += pieces[rng() % pieces.size()];
      }
    }
    SCOPED_TRACE("input: " + show(in));
    const std::string whole = filter(in, Scope::kInline);
    TerminalOutputFilter f(Scope::kInline);
    std::string chunked;
    for (size_t at = 0; at < in.size();) {
      const size_t n = std::min<size_t>(1 + rng() % 8, in.size() - at);
      chunked += f.feed(std::string_view(in).substr(at, n));
      at += n;
    }
    chunked += f.finish();
    ASSERT_EQ(show(chunked), show(whole));
    ASSERT_EQ("", inline_violation(whole)) << show(whole);
    ASSERT_TRUE(valid_utf8_without_c1(whole)) << show(whole);
    for (const char* hidden : {"\xe2\x80\x8b", "\xe2\x80\xae", "\xef\xbb\xbf", "\xf3\xa0\x81\x81"}) {
      ASSERT_EQ(whole.find(hidden), std::string::npos) << show(whole);
    }
    ASSERT_EQ(show(filter(whole, Scope::kInline)), show(whole));  // what passed passes again, unchanged
    forwarded_csi += whole.find("\x1b[") != std::string::npos;
    marked += whole.find("<U+") != std::string::npos;
  }
  // The input is not so random that nothing passes (most CSI it forms are dropped).
  EXPECT_GT(forwarded_csi, 150);
  EXPECT_GT(marked, 500);
}

}  // namespace
}  // namespace oishell
