// What the displays write for text from inside the sandbox: output filtered (colours kept), the model's text and
// every notice escaped, host changes as warnings, and the terminal put back in order before a question.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

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
