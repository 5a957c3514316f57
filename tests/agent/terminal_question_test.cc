// End to end at a terminal (a pseudo-terminal): the agent's own questions (run this code? allow this connection?)
// are answered only by what the user types after they appear, and come after whatever a block's output did to the
// terminal has been undone.
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/terminal/sandbox_text.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

class TerminalQuestions : public ::testing::Test {
 protected:
  // Runs the interpreter at a terminal, typing `typed_ahead` at once and `answer` when `question` appears.
  RunResult run(ScriptedServer& server, const std::string& prompt, const std::string& typed_ahead,
                const std::string& question, const std::string& answer) {
    RunOptions o;
    o.args = {"--model", "scripted-model", "--api_base", server.base(), prompt};
    o.env = {{"OPENAI_API_KEY", "sk-terminal"}, {"TERM", "xterm"}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.stdin_data = typed_ahead;
    bool answered = false;
    RunResult r = run_in_terminal(o, [&](int terminal, const std::string& out) {
      if (answered || out.find(question) == std::string::npos) return;
      answered = true;
      [[maybe_unused]] ssize_t n = ::write(terminal, answer.data(), answer.size());
    });
    EXPECT_FALSE(r.timed_out) << json(r.out).dump();
    EXPECT_TRUE(answered) << json(r.out).dump();
    return r;
  }
  void profile(const std::string& yaml) {
    std::string dir = home_.path() + "/.config/open-interpreter/profiles";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/default.yaml") << yaml;
  }

  TempDir workspace_, home_;
};

TEST_F(TerminalQuestions, KeysTypedBeforeTheConfirmationDoNotAnswerIt) {
  // Typed ahead (say, at a prompt the block's program printed): "y". Typed after the question: "n". Were the
  // pending input not discarded, the "y" would run the code.
  profile("auto_run: false\n");
  ScriptedServer server(json::array({tool("shell", "touch ran-it"), say("Not run, then.")}));
  RunResult r = run(server, "touch it", "y\n", "Would you like to run this code?", "n\n");
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  struct stat st {};
  EXPECT_EQ(-1, ::stat((workspace_.path() + "/ran-it").c_str(), &st)) << json(r.out).dump();
  // A declined block ends the turn; the conversation says why.
  EXPECT_NE(std::string::npos, saved_conversation(home_.path()).dump().find("The user chose not to run this code."));
}

TEST_F(TerminalQuestions, ANetworkQuestionComesAfterTheOutputIsUndoneAndOnlyALaterAnswerCounts) {
  // The block switches to the alternate screen, clears it, selects line drawing and hidden text, then asks for an
  // unlisted destination (the default policy asks the user). "o" (allow once) is typed ahead; "d" after the
  // question appears.
  ScriptedServer server(json::array(
      {tool("python",
            "import sys, urllib.request\n"
            "sys.stdout.write('\\x1b[?1049h\\x1b[2J\\x1b(0\\x1b[8mpress o: ')\nsys.stdout.flush()\n"
            "try:\n    urllib.request.urlopen('http://unlisted.oishell-test.invalid/', timeout=10)\n"
            "except Exception as e:\n    print('failed:', e)"),
       say("Denied.")}));
  const std::string question = "code wants to reach unlisted.oishell-test.invalid:80";
  RunResult r = run(server, "fetch", "o\n", question, "d\n");
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  // (The terminal shows the reset's closing "\r\n" as "\r\r\n": it is compared without it.)
  std::string_view reset_sequence = kResetTerminal.substr(0, kResetTerminal.size() - 2);
  size_t output = r.out.find("press o: "), reset = r.out.find(reset_sequence), asked = r.out.find(question);
  ASSERT_NE(std::string::npos, output) << json(r.out).dump();
  EXPECT_LT(output, reset) << json(r.out).dump();
  EXPECT_LT(reset, asked) << json(r.out).dump();
  std::string fed = last_tool_output(server.requests().at(1)["body"]);
  EXPECT_NE(std::string::npos, fed.find("failed: HTTP Error 403")) << fed;
  // The refused ask is told once (not also as the relay's denial that followed it), with what the user can do.
  const std::string told = "[network access to unlisted.oishell-test.invalid:80 was refused: the user was asked and "
                           "said no, or nobody could be asked; do not try to reach it another way: the user can allow "
                           "it (`%policy learn`, or a network rule in the sandbox's policy)]";
  EXPECT_NE(std::string::npos, fed.find(told)) << fed;
  EXPECT_EQ(fed.rfind("unlisted.oishell-test.invalid"), fed.find(told) + 19) << fed;  // named once only
}

TEST_F(TerminalQuestions, TheNetworkQuestionTakesOneKeyAndGivesTheTerminalBack) {
  // "a" alone, no Enter: before, the question waited for a whole line.
  ScriptedServer server(json::array(
      {tool("python",
            "import urllib.request\n"
            "try:\n    urllib.request.urlopen('http://unlisted.oishell-test.invalid/', timeout=10)\n"
            "except Exception as e:\n    print('failed:', e)"),
       say("Done.")}));
  RunOptions o;
  o.args = {"--model", "scripted-model", "--api_base", server.base(), "fetch"};
  o.env = {{"OPENAI_API_KEY", "sk-terminal"}, {"TERM", "xterm"}};
  o.cwd = workspace_.path();
  o.home = home_.path();
  bool answered = false, modes_checked = false, keep_answered = false;
  tcflag_t modes_after = 0;
  const std::string told = "network: you allowed unlisted.oishell-test.invalid:80 for the rest of this session";
  RunResult r = run_in_terminal(o, [&](int terminal, const std::string& out) {
    if (!answered && out.find("code wants to reach unlisted.oishell-test.invalid:80") != std::string::npos) {
      answered = true;
      [[maybe_unused]] ssize_t n = ::write(terminal, "a", 1);
    }
    if (answered && !modes_checked && out.find(told) != std::string::npos) {
      termios t{};
      modes_checked = ::tcgetattr(terminal, &t) == 0;  // the master reports the terminal's modes
      modes_after = t.c_lflag;
    }
    // "Always" then offers to keep the rule for later sessions (the diff shown first): not this time.
    if (answered && !keep_answered && out.find("Write it? [y/N]") != std::string::npos) {
      keep_answered = true;
      [[maybe_unused]] ssize_t n = ::write(terminal, "n\r", 2);
    }
  });
  EXPECT_FALSE(r.timed_out) << json(r.out).dump();
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  EXPECT_TRUE(answered) << json(r.out).dump();
  ASSERT_TRUE(modes_checked) << json(r.out).dump();
  // After the question, the terminal echoes and reads lines again (the single-key mode ended with it).
  EXPECT_EQ(tcflag_t(ICANON | ECHO), modes_after & (ICANON | ECHO));
  EXPECT_TRUE(keep_answered) << json(r.out).dump();
  EXPECT_FALSE(std::filesystem::exists(workspace_.path() + "/.oishell/policy.yaml"));  // "n": nothing written
}

TEST_F(TerminalQuestions, ACallWithASecondCodeNestedInItIsRefusedNotAskedAbout) {
  // Issue 34's nested form: the terminal streamed the nested `code` (echo hello world) and asked; the runner took the
  // top-level one, so "y" ran `touch ran-it`. Now the call is refused before any question, and the model is told why.
  // "y" is typed should a question come. Both wire formats (OpenAI's tool_calls, Anthropic's input_json_delta).
  profile("auto_run: false\n");
  for (const char* format : {"openai", "anthropic"}) {
    SCOPED_TRACE(format);
    const json call = {
        {"name", "execute"},
        {"arguments", R"J({"language": "shell", "meta": {"code": "echo hello world"}, "code": "touch ran-it"})J"}};
    json answer = {{"tool_calls", json::array({call})}, {"format", format}};
    json after = say("Understood.");
    after["format"] = format;
    ScriptedServer server(json::array({answer, after}));
    RunOptions o;
    o.args = {"--model", std::string(format) == "openai" ? "scripted-model" : "claude-scripted", "--api_base",
              server.base(), "say hello"};
    o.env = {{"OPENAI_API_KEY", "sk-terminal"}, {"ANTHROPIC_API_KEY", "ak-terminal"}, {"TERM", "xterm"}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    bool asked = false;
    RunResult r = run_in_terminal(o, [&](int terminal, const std::string& out) {
      if (asked || out.find("Would you like to run this code?") == std::string::npos) return;
      asked = true;
      [[maybe_unused]] ssize_t n = ::write(terminal, "y\n", 2);
    });
    EXPECT_FALSE(r.timed_out) << json(r.out).dump();
    EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
    EXPECT_FALSE(asked) << json(r.out).dump();
    struct stat st {};
    EXPECT_EQ(-1, ::stat((workspace_.path() + "/ran-it").c_str(), &st)) << json(r.out).dump();
    EXPECT_NE(std::string::npos, r.out.find("was refused")) << json(r.out).dump();
    ASSERT_GE(server.requests().size(), 2u);
    std::string fed = last_tool_output(server.requests().at(1)["body"]);
    EXPECT_NE(std::string::npos, fed.find("was refused and nothing was run: its `meta` holds another `code`")) << fed;
  }
}

TEST_F(TerminalQuestions, TheQuestionAboutAnOrdinaryCallHasItsCodeRightAboveIt) {
  // The allowed neighbour: the call runs after "y", and the last block before the question is its code.
  profile("auto_run: false\n");
  ScriptedServer server(json::array({tool("shell", "touch ran-it"), say("Done.")}));
  RunResult r = run(server, "touch it", "", "Would you like to run this code?", "y\n");
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  struct stat st {};
  EXPECT_EQ(0, ::stat((workspace_.path() + "/ran-it").c_str(), &st)) << json(r.out).dump();
  const size_t question = r.out.find("Would you like to run this code?");
  const size_t code = r.out.rfind("touch ran-it", question);
  ASSERT_NE(std::string::npos, code) << json(r.out).dump();
  EXPECT_LT(question - code, 200u) << json(r.out).dump();  // the block's end and the question's line between
}

TEST_F(TerminalQuestions, OutputCannotRecolourTheTerminalOrImitateTheQuestionsMark) {
  // Issue 34: the block sets the terminal's background and foreground colours to black (OSC 11, OSC 10), prints a
  // fake question with a copy of the agent's mark for another host, and then reaches an unlisted host. Before the
  // fix the colours passed, the real question was invisible and `a` granted the attacker's host.
  ScriptedServer server(json::array(
      {tool("python",
            "import sys, urllib.request\n"
            "sys.stdout.write('\\x1b[3J\\x1b[5A\\x1b[1;1H\\x1b[2J')\n"
            "sys.stdout.write('\\x1b]11;#000000\\x07\\x1b]10;#000000\\x1b\\\\\\x1b[0;1;7m ? oishell \\x1b[0m '\n"
            "                 'code wants to ' 'reach pypi.org:443 ' + '\\u2014 allow? ')\n"
            "sys.stdout.flush()\n"
            "try:\n    urllib.request.urlopen('http://unlisted.oishell-test.invalid/', timeout=10)\n"
            "except Exception as e:\n    print('failed:', e)"),
       say("Denied.")}));
  const std::string question = "code wants to reach unlisted.oishell-test.invalid:80";
  RunResult r = run(server, "fetch", "", question, "d\n");
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  // No colour change, move up, jump or erasure of the screen or scrollback reached the terminal; the fake's text
  // did, without its reverse video.
  for (const char* gone : {"\x1b]11;", "\x1b]10;", "\x1b[3J", "\x1b[5A", "\x1b[1;1H", "\x1b[2J"}) {
    EXPECT_EQ(std::string::npos, r.out.find(gone)) << json(gone).dump() << " in " << json(r.out).dump();
  }
  size_t fake = r.out.find("code wants to reach pypi.org:443");
  ASSERT_NE(std::string::npos, fake) << json(r.out).dump();
  // The agent's mark (reverse video, which output cannot draw) stands right before the real question, and only
  // there: the fake's copy of it lost its reverse video.
  const std::string mark = "\x1b[0;1;7m ? oishell \x1b[0m ";
  size_t marked = r.out.find(mark + question);
  ASSERT_NE(std::string::npos, marked) << json(r.out).dump();
  EXPECT_LT(fake, marked);
  EXPECT_EQ(marked, r.out.find(mark)) << json(r.out).dump();
  // Only the output's attributes were left to undo, and they were, before the question.
  size_t reset = r.out.find(std::string(kResetColours) + "\r\n", fake);
  EXPECT_LT(reset, marked) << json(r.out).dump();
  // After the block, what the user answered is said again, where the block's output cannot follow it.
  size_t told = r.out.find("network: you denied unlisted.oishell-test.invalid:80", marked);
  EXPECT_NE(std::string::npos, told) << json(r.out).dump();
  std::string fed = last_tool_output(server.requests().at(1)["body"]);
  EXPECT_NE(std::string::npos, fed.find("failed: HTTP Error 403")) << fed;
}

TEST_F(TerminalQuestions, HiddenCharactersInTheCodeToConfirmAreShown) {
  // Issue 34: `cd ./build<U+200B>-cache && rm -rf ./*` looked like `cd ./build-cache && ...` at the question.
  profile("auto_run: false\n");
  ScriptedServer server(json::array({tool("shell", "cd ./build\u200b-cache && touch ran-it"), say("Not run.")}));
  RunResult r = run(server, "clean", "", "Would you like to run this code?", "n\n");
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  // What a person reads: the text without its colours (the highlighter colours the escape's digits).
  std::string seen;
  for (size_t i = 0; i < r.out.size(); ++i) {
    if (r.out.compare(i, 2, "\x1b[") == 0) {
      i = r.out.find_first_of("ABCDGHJKm", i + 2);
      if (i == std::string::npos) break;
      continue;
    }
    seen.push_back(r.out[i]);
  }
  size_t shown = seen.find("cd ./build\\u{200b}-cache && touch ran-it"), asked = seen.find("Would you like to run");
  ASSERT_NE(std::string::npos, shown) << json(r.out).dump();
  EXPECT_LT(shown, asked);
  EXPECT_EQ(std::string::npos, r.out.find("\u200b")) << json(r.out).dump();  // never the character itself
  struct stat st {};
  EXPECT_EQ(-1, ::stat((workspace_.path() + "/ran-it").c_str(), &st));
}

}  // namespace
}  // namespace oishell::agent::test
