// End to end, with the real supervisor: what a block leaves for the host to run later (a protected path, a git
// repository with a planted core.fsmonitor) reaches the user as a warning and the model in the block's result, and
// what sandboxed code prints or names cannot reach beyond the user's screen.
#include <gtest/gtest.h>

#include <sstream>

#include "agent/terminal/sandbox_text.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

constexpr const char* kHostChangesModelKey = "sk-oishell-e2e-host-changes";

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

class HostChangesE2E : public ::testing::Test {
 protected:
  RunResult run(ScriptedServer& server, std::vector<std::string> extra) {
    RunOptions o;
    o.args = {"--model", "scripted-model", "--api_base", server.base(), "--plain"};
    o.args.insert(o.args.end(), extra.begin(), extra.end());
    o.env = {{"OPENAI_API_KEY", kHostChangesModelKey}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    RunResult r = run_interpreter(o);
    EXPECT_FALSE(r.timed_out) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
    return r;
  }
  std::string fed_back(ScriptedServer& s, size_t i) {
    auto reqs = s.requests();
    return i < reqs.size() ? last_tool_output(reqs[i]["body"]) : "<no request " + std::to_string(i) + ">";
  }
  // The console message saved for the last block: the conversation file keeps what the model was told.
  std::string saved_console() {
    json saved = saved_conversation(home_.path());
    std::string last = "<no console message saved>";
    for (const auto& m : saved) {
      if (m.value("type", "") == "console") last = m.value("content", "");
    }
    return last;
  }

  TempDir workspace_, home_;
};

TEST_F(HostChangesE2E, AProtectedPathAndAPlantedRepositoryReachTheUserAndTheModel) {
  // `.envrc` is protected in the default profile (direnv runs it on the host); a new repository whose config names
  // an fsmonitor would run it at the user's next `git status`. Without the sandbox both would be left in silence.
  ScriptedServer server(json::array(
      {tool("shell", "touch .envrc && git init -q sub && printf '[core]\\n\\tfsmonitor = touch marker\\n' >> "
                     "sub/.git/config && echo planted"),
       say("I changed a few things.")}));
  RunResult r = run(server, {"plant something"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  const std::string envrc = workspace_.path() + "/.envrc (created)";
  const std::string config = workspace_.path() + "/sub/.git/config";

  // The user: a warning naming the path and what happened, once (every later `exit` event repeats the list).
  EXPECT_EQ(1u, count(r.out, "WARNING: sandbox: protected path changed during the run: " + envrc)) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("Protected paths are reported, not restored")) << r.out;
  // The model: the same lines in the block's result, and what to do about them.
  std::string fed = fed_back(server, 1);
  EXPECT_NE(std::string::npos, fed.find("[sandbox: protected path changed during the run: " + envrc + "]")) << fed;
  EXPECT_NE(std::string::npos, fed.find("do not create or change such files again")) << fed;
  EXPECT_EQ(fed, saved_console());

  EXPECT_NE(std::string::npos, r.out.find("WARNING: sandbox: git repository neutralised: " + config + ": ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("core.fsmonitor")) << r.out;
  EXPECT_NE(std::string::npos, fed.find("[sandbox: git repository neutralised: " + config + ": ")) << fed;
  EXPECT_NE(std::string::npos, fed.find("core.fsmonitor")) << fed;
}

TEST_F(HostChangesE2E, AWarningIsRepeatedAfterTheTurnWhenALaterBlockRanAfterIt) {
  // Issue 34: a later block's output can scroll a warning away: once the model's turn is over it is shown again,
  // below everything the turn printed, and not once more at the session's end (no block ran since). A turn whose
  // last block made the change does not repeat it (the neighbour, the test above).
  ScriptedServer server(json::array({tool("shell", "touch .envrc"), tool("shell", "echo LATER-OUTPUT"),
                                     say("Done.")}));
  RunResult r = run(server, {"plant"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  const std::string warning =
      "WARNING: sandbox: protected path changed during the run: " + workspace_.path() + "/.envrc (created)";
  EXPECT_EQ(2u, count(r.out, warning)) << r.out;
  size_t later = r.out.find("LATER-OUTPUT\n"), again = r.out.find("During this session the sandbox reported:");
  ASSERT_NE(std::string::npos, again) << r.out;
  EXPECT_LT(later, again) << r.out;
  EXPECT_LT(again, r.out.rfind(warning)) << r.out;
}

TEST_F(HostChangesE2E, InJsonModeAHostChangeIsAWarningWithItsDetails) {
  ScriptedServer server(json::array({tool("shell", "touch .envrc"), say("Done.")}));
  RunResult r = run(server, {"--json", "plant"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  std::istringstream lines(r.out);
  std::string line;
  json found;
  while (std::getline(lines, line)) {
    for (char c : line) ASSERT_GT(0x80, static_cast<unsigned char>(c)) << "not ASCII: " << line;
    json chunk = json::parse(line, nullptr, false);
    ASSERT_TRUE(chunk.is_object()) << line;
    if (chunk.contains("host_change")) found = chunk;
  }
  ASSERT_TRUE(found.is_object()) << r.out;
  EXPECT_EQ("notice", found["type"]);
  EXPECT_EQ("warning", found["format"]);
  EXPECT_EQ("protected_changed", found["host_change"]["kind"]);
  EXPECT_EQ(workspace_.path() + "/.envrc (created)", found["host_change"]["path"]);
  EXPECT_NE(std::string::npos, found["content"].get<std::string>().find("protected path changed")) << found;
}

TEST_F(HostChangesE2E, OutputKeepsItsColoursAndLosesWhatReachesBeyondTheScreen) {
  // OSC 52 writes the clipboard; a DCS tmux passthrough smuggles a sequence to an outer terminal; C1 controls (raw
  // bytes, and U+009D/U+009C, an 8-bit OSC 52) are read as ESC sequences by some terminals; the model's own text
  // repeats an OSC 52 (as a model told so by a program's output might). Without the filter each would reach the
  // terminal as written.
  // (The payloads are split in the code, 'UFdO' 'RUQx', so that the code shown before it runs does not hold them.)
  const std::string code =
      "import sys\n"
      "sys.stdout.write('\\x1b]52;c;UFdO' 'RUQx\\x07')\n"
      "sys.stdout.write('\\x1bPtmux;\\x1b\\x1b]52;c;UFdO' 'RUQy\\x07\\x1b\\\\')\n"
      "sys.stdout.write('\\x9d52;c;UFdO' 'RUQz\\x9c')\n"
      "sys.stdout.flush()\n"
      "sys.stdout.buffer.write(b'\\x9b2J \\x1b[31mRED-TEXT\\x1b[0m\\n')\n"
      "sys.stdout.flush()\n"
      "sys.stderr.write('\\x1b[32mGREEN-ERR\\x1b[0m \\x1b[?1049h\\n')\n";
  ScriptedServer server(json::array({tool("python", code, "Model: \x1b]52;c;TU9ERUw=\x07 done."), say("Done.")}));
  RunResult r = run(server, {"print"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  // The colours pass.
  EXPECT_NE(std::string::npos, r.out.find("\x1b[31mRED-TEXT\x1b[0m")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("\x1b[32mGREEN-ERR\x1b[0m")) << r.out;
  // Nothing of the clipboard writes, the DCS or the C1 controls does.
  for (const char* gone :
       {"UFdORUQx", "UFdORUQy", "UFdORUQz", "\x1b]52", "\x1bP", "\xc2\x9d", "\xc2\x9c", "\xc2\x9b"}) {
    EXPECT_EQ(std::string::npos, r.out.find(gone)) << "found " << json(gone).dump() << " in " << json(r.out).dump();
  }
  EXPECT_TRUE(valid_utf8(r.out)) << json(r.out).dump();  // so no raw C1 byte either
  // The model's text is shown with its controls escaped.
  EXPECT_NE(std::string::npos, r.out.find("Model: \\x1b]52;c;TU9ERUw=\\x07 done.")) << r.out;
  // Neither the alternate screen nor the erased screen (8-bit CSI 2J) passes: output is shown in line
  // (issue 34); its colours are reset before the agent goes on.
  EXPECT_EQ(std::string::npos, r.out.find("\x1b[?1049h")) << json(r.out).dump();
  EXPECT_EQ(std::string::npos, r.out.find("\x1b[2J")) << json(r.out).dump();
  size_t coloured = r.out.find("GREEN-ERR"), reset = r.out.find(std::string(kResetColours), coloured);
  EXPECT_NE(std::string::npos, reset) << json(r.out).dump();
  // The model is told what the program printed, as it printed it.
  EXPECT_NE(std::string::npos, fed_back(server, 1).find("\x1b]52;c;UFdORUQx\x07")) << fed_back(server, 1);
}

TEST_F(HostChangesE2E, AnEscapeInAProtectedPathIsShownEscaped) {
  // .husky (a git-hooks manager's directory) is protected; the name of the hook made in it carries an OSC that
  // would set the terminal's title, were it printed as it is.
  ScriptedServer server(json::array(
      {tool("python", "import os\nos.mkdir('.husky')\nopen('.husky/pre\\x1b]0;PWNED-TITLE\\x07commit', 'w').close()"),
       say("Done.")}));
  RunResult r = run(server, {"hook"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  const std::string shown = workspace_.path() + "/.husky/pre\\x1b]0;PWNED-TITLE\\x07commit (created)";
  EXPECT_NE(std::string::npos, r.out.find("WARNING: sandbox: protected path changed during the run: " + shown))
      << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("\x1b]0;")) << json(r.out).dump();
  EXPECT_NE(std::string::npos, fed_back(server, 1).find(shown)) << fed_back(server, 1);
}

}  // namespace
}  // namespace oishell::agent::test
