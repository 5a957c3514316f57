// End to end, on a pseudo-terminal: Open Interpreter's no-model flow. With no model configured anywhere the
// interpreter uses gpt-4o; without OPENAI_API_KEY it asks for the key on the terminal with echo off, sends it
// (here to a loopback stand-in named by OPENAI_API_BASE), and saves it only when the user answers yes: in a 0600
// file of the agent's config dir that the sandbox never sees. Without a terminal it exits 2 as before.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

constexpr const char* kTypedKey = "sk-typed-at-the-terminal-7c41e0";

class NoModelFlow : public ::testing::Test {
 protected:
  // Runs `interpreter <args>` on a terminal with no model and no key configured, typing the key when asked and
  // `save_answer` at the save question.
  RunResult run_typing(ScriptedServer& server, const std::string& save_answer, std::vector<std::string> args) {
    RunOptions o;
    o.args = std::move(args);
    o.env = {{"OPENAI_API_BASE", server.base()}, {"TERM", "xterm"}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.timeout_ms = 60000;
    bool typed_key = false, typed_answer = false;
    RunResult r = run_in_terminal(o, [&](int fd, const std::string& out) {
      if (!typed_key && out.find("OpenAI API key: ") != std::string::npos) {
        typed_key = true;
        std::string line = std::string(kTypedKey) + "\n";
        EXPECT_EQ(static_cast<ssize_t>(line.size()), ::write(fd, line.data(), line.size()));
      }
      if (!typed_answer && out.find("[y/N]") != std::string::npos) {
        typed_answer = true;
        std::string line = save_answer + "\n";
        EXPECT_EQ(static_cast<ssize_t>(line.size()), ::write(fd, line.data(), line.size()));
      }
    });
    EXPECT_FALSE(r.timed_out) << r.out;
    EXPECT_TRUE(typed_key) << r.out;
    EXPECT_TRUE(typed_answer) << r.out;
    return r;
  }
  std::string key_file() const { return home_.path() + "/.config/open-interpreter/keys/OPENAI_API_KEY"; }

  TempDir workspace_, home_;
};

TEST_F(NoModelFlow, AsksForTheKeyWithoutEchoUsesItAndDoesNotSaveIt) {
  ScriptedServer server(json::array({say("Hello from the default model.")}));
  RunResult r = run_typing(server, "n", {"--plain", "--sandbox", "none", "hello"});
  EXPECT_EQ(0, r.exit_code) << r.out;
  auto reqs = server.requests();
  ASSERT_EQ(1u, reqs.size()) << r.out;
  EXPECT_EQ("gpt-4o", reqs[0]["body"]["model"]);  // OI's default model
  EXPECT_EQ(std::string("Bearer ") + kTypedKey, reqs[0]["headers"]["Authorization"]);
  EXPECT_EQ(std::string::npos, r.out.find(kTypedKey)) << r.out;  // not echoed, not shown
  EXPECT_NE(std::string::npos, r.out.find("Hello from the default model.")) << r.out;
  struct stat st {};
  EXPECT_EQ(-1, ::stat(key_file().c_str(), &st));  // answered no: nothing saved
  EXPECT_NE(std::string::npos, r.out.find("export OPENAI_API_KEY")) << r.out;  // where to keep it instead
}

TEST_F(NoModelFlow, SavedOnYesPrivateUsedLaterAndNeverInsideTheSandbox) {
  ScriptedServer first(json::array({say("saved")}));
  RunResult r = run_typing(first, "y", {"--plain", "--sandbox", "none", "hello"});
  EXPECT_EQ(0, r.exit_code) << r.out;
  struct stat st {};
  ASSERT_EQ(0, ::stat(key_file().c_str(), &st)) << r.out;
  EXPECT_EQ(0600u, st.st_mode & 0777);
  EXPECT_EQ(std::string(kTypedKey) + "\n", read_text(key_file()));
  EXPECT_EQ(std::string::npos, r.out.find(kTypedKey)) << r.out;

  // A later session without a terminal: the saved key is used, and sandboxed code finds it nowhere.
  ScriptedServer later(json::array(
      {tool("shell", "env; cat /proc/self/environ | tr '\\0' '\\n'; cat ~/.config/open-interpreter/keys/* 2>&1; "
                     "cat " + key_file() + " 2>&1"),
       say("done")}));
  RunOptions o;
  o.args = {"--plain", "show me the environment"};
  o.env = {{"OPENAI_API_BASE", later.base()}};
  o.cwd = workspace_.path();
  o.home = home_.path();
  RunResult second = run_interpreter(o);
  EXPECT_EQ(0, second.exit_code) << second.out << second.err;
  auto reqs = later.requests();
  ASSERT_EQ(2u, reqs.size()) << second.out << second.err;
  EXPECT_EQ(std::string("Bearer ") + kTypedKey, reqs[0]["headers"]["Authorization"]);
  std::string fed_back = last_tool_output(reqs[1]["body"]);
  EXPECT_NE(std::string::npos, fed_back.find("PATH=")) << fed_back;  // the block ran
  EXPECT_EQ(std::string::npos, fed_back.find(kTypedKey)) << fed_back;
}

TEST_F(NoModelFlow, WithoutATerminalItIsAClearErrorExit2) {
  ScriptedServer server(json::array({say("unreachable")}));
  RunOptions o;
  o.args = {"--plain", "--sandbox", "none", "a one-shot prompt"};
  o.env = {{"OPENAI_API_BASE", server.base()}};
  o.cwd = workspace_.path();
  o.home = home_.path();
  RunResult r = run_interpreter(o);
  EXPECT_EQ(2, r.exit_code) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("No language model is configured")) << r.out;
  EXPECT_EQ(0u, server.requests().size());
  o.args = {"--json", "--sandbox", "none", "a one-shot prompt"};
  r = run_interpreter(o);
  EXPECT_EQ(2, r.exit_code) << r.out << r.err;
  EXPECT_EQ(0u, server.requests().size());
}

}  // namespace
}  // namespace oishell::agent::test
