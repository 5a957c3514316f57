// What the displays write for text from inside the sandbox: output filtered (colours kept), the model's text and
// every notice escaped, host changes as warnings, and the terminal put back in order before a question.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "agent/terminal/highlight.h"
#include "agent/terminal/json_display.h"
#include "agent/terminal/sandbox_text.h"
#include "agent/terminal/terminal_display.h"

namespace oishell::agent {
namespace {

// A FILE* writing to memory; text() is what was written so far.
class MemoryFile {
 public:
  MemoryFile() : file_(::open_memstream(&data_, &size_)) {}
  ~MemoryFile() {
    std::fclose(file_);
    std::free(data_);
  }
  FILE* get() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(data_, size_);
  }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  FILE* file_;
};

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(TextEscaper, ControlsAreShownAndACharacterCutBetweenPiecesIsKeptWhole) {
  TextEscaper e;
  std::string out = e.feed("caf\xc3");  // é cut after its first byte
  EXPECT_EQ("caf", out);
  out += e.feed("\xa9 \x1b]52;c;eA==\x07 \xe2\x80\xae!\n\tend\r");
  out += e.finish();
  EXPECT_EQ("caf\xc3\xa9 \\x1b]52;c;eA==\\x07 \\u{202e}!\n\tend\\x0d", out);
  EXPECT_EQ("", e.feed("\xc3"));
  EXPECT_EQ("\\xc3", e.finish());  // a character cut at the very end is shown as its byte
}

TEST(ScanOutput, ColoursAreToldApartFromWhatMovesOrSetsModes) {
  EXPECT_EQ(TerminalEffect::none, scan_output("plain\ntext", true).effect);
  EXPECT_EQ(TerminalEffect::in_line, scan_output("\x1b[1;31mred\x1b[0m", true).effect);
  EXPECT_EQ(TerminalEffect::in_line, scan_output("\r50%\x1b[K\x1b[10G", true).effect);  // a progress line
  EXPECT_EQ(TerminalEffect::other, scan_output("\x1b[>4;2m", true).effect);  // modifyOtherKeys, not a colour
  EXPECT_EQ(TerminalEffect::other, scan_output("\x1b[2A", true).effect);
  EXPECT_EQ(TerminalEffect::other, scan_output("\x1b(0", true).effect);
  EXPECT_EQ(TerminalEffect::other, scan_output("\x0e", true).effect);
  EXPECT_EQ(TerminalEffect::other, scan_output("\x1b]0;title\x07", true).effect);
  EXPECT_TRUE(scan_output("text\n\x1b[0m", false).line_start);
  EXPECT_FALSE(scan_output("text\r", true).line_start);  // a CR returns over the line: it is not a fresh one
  EXPECT_FALSE(scan_output("\x1b]0;a\nb\x07x", true).line_start);
  EXPECT_TRUE(scan_output("\x1b]0;ab\x1b\\\n", false).line_start);
}

TEST(TerminalDisplay, OutputKeepsColoursLosesTheClipboardAndIsResetAfterTheBlock) {
  MemoryFile out;
  TerminalDisplay d(out.get(), /*colour=*/false, false, false, false);
  d.console_begin();
  d.console_output("stdout", "\x1b]52;c;UFdORUQ=\x07\x1b[31mred");
  d.console_output("stdout", "\x1b[0m\n\x1b]5");  // an OSC cut between two events of one stream
  d.console_output("stderr", "\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\err\n");
  d.console_output("stdout", "2;c;eA==\x07" "done\n");
  d.console_end({{"status", "ok"}, {"exit_code", 0}});
  EXPECT_EQ("\x1b[31mred\x1b[0m\nerr\ndone\n" + std::string(kResetColours), out.text());
}

TEST(TerminalDisplay, BeforeAQuestionWhatOutputDidToTheTerminalIsUndoneOnce) {
  MemoryFile out;
  TerminalDisplay d(out.get(), false, false, false, false);
  d.console_begin();
  d.console_output("stdout", "\x1b[?1049h\x1b[H\x1b(0\x1b[8mAllow? ");
  d.before_question();
  std::string text = out.text();
  ASSERT_TRUE(text.ends_with(kResetTerminal)) << text;
  d.before_question();  // nothing new to undo
  EXPECT_EQ(text, out.text());
  d.console_output("stdout", "more\n");
  d.console_end({{"status", "ok"}, {"exit_code", 0}});
  EXPECT_EQ(text + "more\n", out.text());
}

TEST(TerminalDisplay, NoticesModelTextAndHostChangesAreEscaped) {
  MemoryFile out;
  TerminalDisplay d(out.get(), false, false, false, false);
  d.message_delta("See \x1b]52;c;eA==\x07 and \xc2\x9b" "2J.");
  d.answer_end();
  d.notice(NoticeLevel::warning, "sandbox: denied a\x1b[2Jb\nsecond line");
  d.host_changes({{HostChange::Kind::protected_path, "/w/.husky/pre\x1b]0;T\x07" "commit (created)", "", ""},
                  {HostChange::Kind::repository, "/w/s\x1b[1A/.git/config", "found \x9b", "did \xe2\x80\xae"}});
  std::string text = out.text();
  EXPECT_TRUE(contains(text, "See \\x1b]52;c;eA==\\x07 and \\u{009b}2J.\n")) << text;
  EXPECT_TRUE(contains(text, "sandbox: denied a\\x1b[2Jb\nsecond line\n")) << text;
  EXPECT_TRUE(contains(text, "WARNING: sandbox: protected path changed during the run: "
                             "/w/.husky/pre\\x1b]0;T\\x07commit (created)\n"))
      << text;
  EXPECT_TRUE(contains(text, "WARNING: sandbox: git repository neutralised: /w/s\\x1b[1A/.git/config: found \\x9b; "
                             "did \\u{202e}\n"))
      << text;
  EXPECT_FALSE(contains(text, "\x1b")) << text;
}

// ---- issue 34: output cannot forge or hide the agent's screen ----
// Before the inline filter, each "dropped" sequence below reached the terminal as the block wrote it.

TEST(ConsoleFilter, ColoursLinksAndTitlesOutsideTheOutputAreDroppedItsOwnColoursPass) {
  ConsoleFilter f;
  // A block made the text the colour of the background (OSC 11, OSC 10) and printed a fake question.
  std::string out = f.feed("stdout", "\x1b]11;#000000\x07\x1b]10;#000000\x1b\\\x1b]4;7;rgb:0/0/0\x07"
                                     "code wants to reach pypi.org:443 - allow (o)nce / (a)lways / (d)eny? ");
  EXPECT_EQ("code wants to reach pypi.org:443 - allow (o)nce / (a)lways / (d)eny? ", out);
  EXPECT_EQ("link", f.feed("stdout", "\x1b]8;;https://attacker.example/\x1b\\link"));  // left open
  EXPECT_EQ("", f.feed("stderr", "\x1b]0;title\x07\x1b]12;red\x07\x1b]17;red\x07\x1b]19;red\x07"));
  // The neighbours: ordinary colours and their reset, a progress bar, newlines and text.
  EXPECT_EQ("\x1b[31mred\x1b[0m\r10%\r20%\nhéllo 日本\n",
            f.feed("stdout", "\x1b[31mred\x1b[0m\r10%\r20%\nhéllo 日本\n"));
  EXPECT_EQ("", f.finish_stdout());
}

TEST(ConsoleFilter, OutputCannotMoveAboveItselfEraseTheScreenOrTheScrollback) {
  ConsoleFilter f;
  // A block redrew its own code block above it as harmless code.
  std::string out =
      f.feed("stdout", "x\x1b[3A\x1b[2K\x1b[H\x1b[1;1Hprint('hi')\x1b[J\x1b[2J\x1b[3J\x1bM\x1b" "7\x1b" "8");
  EXPECT_EQ("x\x1b[2Kprint('hi')\x1b[J", out);
  // Reverse video and backgrounds, the agent's marks, are not the output's to draw; nor is hidden text.
  EXPECT_EQ("\x1b[1mQ\x1b[32mA", f.feed("stdout", "\x1b[7m\x1b[8m\x1b[1;7mQ\x1b[43;32mA"));
}

TEST(ConsoleFilter, HiddenCharactersInOutputAreMarked) {
  ConsoleFilter f;
  EXPECT_EQ("cd ./build<U+200B>-cache <U+202E>x<U+FEFF>\n", f.feed("stdout", "cd ./build\u200b-cache \u202ex\ufeff\n"));
  EXPECT_EQ("héllo 日本\n", f.feed("stdout", "héllo 日本\n"));
}

TEST(TextEscaper, HiddenCharactersInTheCodeShownAreMarked) {
  // The code shown for confirmation: `cd ./build<U+200B>-cache` read as `cd ./build-cache`.
  TextEscaper e;
  std::string out = e.feed("cd ./build\xe2\x80");  // U+200B cut between two pieces
  out += e.feed("\x8b-cache && rm -rf ./*\n\u2066# comment\u2069 x\U000E0041");
  out += e.finish();
  EXPECT_EQ("cd ./build\\u{200b}-cache && rm -rf ./*\n\\u{2066}# comment\\u{2069} x\\u{e0041}", out);
}

// The model's prose keeps an emoji's joiners, across pieces too; the code shown for confirmation marks every one.
TEST(TextEscaper, ProseKeepsAnEmojisJoinersAndCodeMarksThem) {
  TextEscaper prose;
  std::string out = prose.feed("Done \U0001F469", EmojiJoiners::kept);
  out += prose.feed("\u200d", EmojiJoiners::kept);
  out += prose.feed("\U0001F4BB and \u2764\ufe0f, not a\u200db", EmojiJoiners::kept);
  out += prose.finish(EmojiJoiners::kept);
  EXPECT_EQ("Done \U0001F469\u200d\U0001F4BB and \u2764\ufe0f, not a\\u{200d}b", out);
  TextEscaper code;
  EXPECT_EQ("echo \U0001F469\\u{200d}\U0001F4BB \u2764\\u{fe0f}",
            code.feed("echo \U0001F469\u200d\U0001F4BB \u2764\ufe0f") + code.finish());
}

TEST(ConsoleFilter, AnEmojiInOutputKeepsItsLook) {
  ConsoleFilter f;
  EXPECT_EQ("\U0001F469\u200d\U0001F4BB ok\n", f.feed("stdout", "\U0001F469\u200d\U0001F4BB ok\n"));
}

TEST(Highlighter, EscapesOfHiddenCharactersAndControlsStandOutInReverseVideo) {
  // The code shown for confirmation, coloured: `\u{200b}` whole and in reverse video (the numbers' yellow cut it in
  // three before), in any piece boundary; other backslashes and strings as before.
  const std::string code = "cd ./build\\u{200b}-cache && printf 'a\\n' \\x1b 12 \\u{20} \\";
  const std::string expected = "\x1b[35mcd\x1b[0m ./build\x1b[7m\\u{200b}\x1b[0m-cache && printf \x1b[32m'a\\n'"
                               "\x1b[0m \x1b[7m\\x1b\x1b[0m \x1b[33m12\x1b[0m \\u{20} \\";
  Highlighter whole("shell");
  std::string out = whole.feed(code);
  EXPECT_EQ(expected, out + whole.finish());
  for (size_t at = 0; at <= code.size(); ++at) {
    Highlighter cut("shell");
    std::string out = cut.feed(code.substr(0, at));
    out += cut.feed(code.substr(at));
    ASSERT_EQ(expected, out + cut.finish()) << "cut at " << at;
  }
}

TEST(TerminalDisplay, QuestionsAndWarningsCarryAMarkOutputCannotDraw) {
  MemoryFile out;
  TerminalDisplay d(out.get(), /*colour=*/false, false, /*interactive=*/true, false);
  d.console_begin();
  d.console_output("stdout", "\x1b[7m ? oishell \x1b[0m fake? ");
  d.before_question();
  std::string text = out.text();
  // The output's reverse video is gone; the reset, then the agent's reverse-video mark on a fresh line.
  EXPECT_TRUE(text.starts_with(" ? oishell \x1b[0m fake? ")) << text;
  EXPECT_TRUE(text.ends_with("\n\x1b[0;1;7m ? oishell \x1b[0m ")) << text;
  d.host_changes({{HostChange::Kind::protected_path, "/w/.envrc (created)", "", ""}});
  d.notice(NoticeLevel::warning, "sandbox: denied");
  text = out.text();
  EXPECT_TRUE(contains(text, "\x1b[0;1;7;33m ⚠ \x1b[0m WARNING: sandbox: protected path changed")) << text;
  EXPECT_TRUE(contains(text, "\x1b[0;1;7;33m ! \x1b[0m sandbox: denied\n")) << text;
}

TEST(TerminalDisplay, TheResetBeforeAQuestionCoversColoursLinksAndEveryMode) {
  for (std::string_view part : {"\x1b]104\x1b\\", "\x1b]110\x1b\\", "\x1b]111\x1b\\", "\x1b]112\x1b\\",
                                "\x1b]8;;\x1b\\", "\x1b[?2026l", "\x1b[12h", "\x1b[20l", "\x1b[4l", "\x1b[2l",
                                "\x1b[3g\r\x1b[8C\x1bH", "\x1b[?25h", "\x1b[?1049l", "\x1b[r", "\x1b(B\x0f",
                                "\x1b[0m", "\x1b[?45l"}) {
    EXPECT_TRUE(contains(std::string(kResetTerminal), part)) << part;
  }
  EXPECT_TRUE(kResetTerminal.starts_with("\x1b[?2026l"));  // first: else the terminal may show none of it
  EXPECT_TRUE(kResetTerminal.ends_with("\r\n"));
}

TEST(JsonDisplay, TheModelsEscapeSequencesAreEscaped) {
  MemoryFile out;
  JsonDisplay d(out.get());
  d.message_delta("a \x1b]0;T\x07 \xe2\x80");
  d.message_delta("\x8b b");
  d.code_begin("shell");
  d.code_delta("echo \x1b[2J\u200b\n");
  d.code_end();
  d.confirmation("shell", "rm -rf \u202e/\x1b[A");
  std::istringstream lines(out.text());
  std::vector<nlohmann::json> chunks;
  for (std::string line; std::getline(lines, line);) chunks.push_back(nlohmann::json::parse(line));
  std::string message, code;
  for (const auto& c : chunks) {
    if (!c.contains("content") || !c["content"].is_string()) continue;
    (c["type"] == "message" ? message : code) += c["content"].get<std::string>();
  }
  EXPECT_EQ("a \\x1b]0;T\\x07 \\u{200b} b", message);
  EXPECT_EQ("echo \\x1b[2J\\u{200b}\n", code);
  EXPECT_EQ("rm -rf \\u{202e}/\\x1b[A", chunks.back()["content"]["content"]);
}

TEST(JsonDisplay, LinesAreAsciiOutputIsFilteredAndHostChangesCarryTheirDetails) {
  MemoryFile out;
  JsonDisplay d(out.get());
  d.console_begin();
  d.console_output("stdout", "\x1b]52;c;eA==\x07\x1b[32mok\x1b[0m \xc2\x9d" "52;c;eA==\xc2\x9c\xe2\x9c\x93\n");
  d.console_end({{"status", "ok"}, {"exit_code", 0}});
  d.notice(NoticeLevel::warning, "host a\x1b[2Jb");
  d.host_changes({{HostChange::Kind::repository, "/w/sub/.git/config", "sets core.fsmonitor", "rewritten"}});
  std::istringstream lines(out.text());
  std::vector<nlohmann::json> chunks;
  for (std::string line; std::getline(lines, line);) {
    for (char c : line) ASSERT_GT(0x80, static_cast<unsigned char>(c)) << line;
    chunks.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(5u, chunks.size()) << out.text();
  EXPECT_EQ("\x1b[32mok\x1b[0m \xe2\x9c\x93\n", chunks[1]["content"]);
  EXPECT_EQ("host a\\x1b[2Jb", chunks[3]["content"]);
  EXPECT_EQ("repo_neutralised", chunks[4]["host_change"]["kind"]);
  EXPECT_EQ("/w/sub/.git/config", chunks[4]["host_change"]["path"]);
  EXPECT_EQ("sets core.fsmonitor", chunks[4]["host_change"]["found"]);
  EXPECT_EQ("sandbox: git repository neutralised: /w/sub/.git/config: sets core.fsmonitor; rewritten",
            chunks[4]["content"]);
}

}  // namespace
}  // namespace oishell::agent
