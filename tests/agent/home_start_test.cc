// Started where the sandbox will not let code write (the home directory, a directory containing it, `/`), the
// agent does not die at the first block: the session works in a fresh workspace of its own, named in a notice, the
// banner and %info, and kept (agent/sandbox/session_workspace.h). --sandbox none consults no workspace refusal: the code
// runs where the agent was started. At a pseudo-terminal, as a user starts it.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The session workspaces made under `home` (XDG_DATA_HOME=home/.local/share).
std::vector<std::string> fresh_workspaces(const std::string& home) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(home + "/.local/share/oishell/workspaces", ec)) {
    found.push_back(e.path().string());
  }
  return found;
}

class StartedInHome : public ::testing::Test {
 protected:
  // `interpreter ARGS` at a terminal in `cwd`, answering "y" when asked to run code.
  RunResult run(ScriptedServer& server, const std::string& cwd, std::vector<std::string> args) {
    RunOptions o;
    o.args = {"--model", "scripted-model", "--api_base", server.base()};
    o.args.insert(o.args.end(), args.begin(), args.end());
    o.env = {{"OPENAI_API_KEY", "sk-home"}, {"TERM", "xterm"}};
    o.cwd = cwd;
    o.home = home_;
    bool answered = false;
    RunResult r = run_in_terminal(o, [&](int terminal, const std::string& out) {
      if (answered || out.find("Would you like to run this code?") == std::string::npos) return;
      answered = true;
      [[maybe_unused]] ssize_t n = ::write(terminal, "y\n", 2);
    });
    EXPECT_FALSE(r.timed_out) << json(r.out).dump();
    return r;
  }
  void profile(const std::string& yaml) {
    std::string dir = home_ + "/.config/open-interpreter/profiles";
    fs::create_directories(dir);
    std::ofstream(dir + "/default.yaml") << yaml;
  }
  // The block the model sends: where it runs, and a file made there.
  static json block() { return tool("shell", "pwd; touch made-here"); }

  TempDir root_;
  const std::string home_ = root_.path() + "/home/someone";
  void SetUp() override {
    fs::create_directories(home_);
    std::ofstream(home_ + "/.bashrc") << "# rc\n";
  }
};

// Checks one run that started in `cwd`, a directory the sandbox refuses: the block ran in one fresh workspace.
void expect_fresh_workspace(const RunResult& r, ScriptedServer& server, const std::string& home,
                            const std::string& cwd, const std::string& why) {
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  auto made = fresh_workspaces(home);
  ASSERT_EQ(1u, made.size()) << json(r.out).dump();
  const std::string& ws = made[0];
  EXPECT_EQ(fs::perms::owner_all, fs::status(ws).permissions() & fs::perms::all) << ws;  // 0700: the user's own
  EXPECT_NE(std::string::npos, r.out.find("Started in " + cwd + ", " + why)) << json(r.out).dump();
  EXPECT_NE(std::string::npos, r.out.find("fresh directory, kept after it: " + ws)) << json(r.out).dump();
  EXPECT_TRUE(exists(ws + "/made-here")) << json(r.out).dump();  // the block ran, there
  EXPECT_FALSE(exists(cwd + "/made-here"));                       // not where the agent was started
  EXPECT_EQ(std::string::npos, r.out.find("refused")) << json(r.out).dump();
  ASSERT_GE(server.requests().size(), 2u) << json(r.out).dump();
  std::string fed = last_tool_output(server.requests().at(1)["body"]);
  EXPECT_NE(std::string::npos, fed.find(ws)) << fed;  // pwd
}

TEST_F(StartedInHome, AutoRunTheBlockRunsInAFreshWorkspace) {
  ScriptedServer server(json::array({block(), say("Done.")}));
  RunResult r = run(server, home_, {"-y", "make a file"});
  expect_fresh_workspace(r, server, home_, home_, "your home directory");
  EXPECT_FALSE(exists(home_ + "/made-here"));
  EXPECT_EQ("# rc\n", read_text(home_ + "/.bashrc"));
}

TEST_F(StartedInHome, AskingFirstTheBlockRunsInAFreshWorkspace) {
  profile("auto_run: false\n");
  ScriptedServer server(json::array({block(), say("Done.")}));
  RunResult r = run(server, home_, {"make a file"});
  EXPECT_NE(std::string::npos, r.out.find("Would you like to run this code?")) << json(r.out).dump();
  expect_fresh_workspace(r, server, home_, home_, "your home directory");
}

TEST_F(StartedInHome, AnAncestorOfTheHomeAndTheRootDirectoryAlike) {
  {
    ScriptedServer server(json::array({block(), say("Done.")}));
    const std::string parent = root_.path() + "/home";
    RunResult r = run(server, parent, {"-y", "make a file"});
    expect_fresh_workspace(r, server, home_, parent, "a directory containing your home directory");
  }
  fs::remove_all(home_ + "/.local/share/oishell/workspaces");
  {
    ScriptedServer server(json::array({block(), say("Done.")}));
    RunResult r = run(server, "/", {"-y", "make a file"});
    expect_fresh_workspace(r, server, home_, "/", "the root directory");
  }
}

TEST_F(StartedInHome, TheBannerAndInfoNameTheWorkspace) {
  ScriptedServer server(json::array({say("Hello.")}));
  RunOptions o;
  o.args = {"--model", "scripted-model", "--api_base", server.base()};
  o.env = {{"OPENAI_API_KEY", "sk-home"}, {"TERM", "xterm"}};
  o.cwd = home_;
  o.home = home_;
  o.stdin_data = "%info\r";
  bool ended = false;
  RunResult r = run_in_terminal(o, [&](int terminal, const std::string& out) {
    // Ctrl-D at the prompt after %info's answer ends the session.
    if (ended || out.find("profile: ") == std::string::npos || out.rfind("> ") < out.find("profile: ")) return;
    ended = true;
    [[maybe_unused]] ssize_t n = ::write(terminal, "\x04", 1);
  });
  EXPECT_FALSE(r.timed_out) << json(r.out).dump();
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  auto made = fresh_workspaces(home_);
  ASSERT_EQ(1u, made.size()) << json(r.out).dump();
  // The banner: "interpreter VERSION · model · openshell sandbox, policy default, fresh workspace DIR · auto_run on".
  EXPECT_NE(std::string::npos, r.out.find("policy default, fresh workspace " + made[0] + " \xc2\xb7 auto_run on"))
      << json(r.out).dump();
  EXPECT_NE(std::string::npos, r.out.find("workspace: " + made[0])) << json(r.out).dump();  // %info
}

TEST_F(StartedInHome, AProjectInsideTheHomeIsTheWorkspaceItself) {
  // The neighbour: nothing refused, nothing made.
  const std::string project = home_ + "/project";
  fs::create_directories(project);
  ScriptedServer server(json::array({block(), say("Done.")}));
  RunResult r = run(server, project, {"-y", "make a file"});
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  EXPECT_TRUE(exists(project + "/made-here")) << json(r.out).dump();
  EXPECT_TRUE(fresh_workspaces(home_).empty());
  EXPECT_EQ(std::string::npos, r.out.find("Started in")) << json(r.out).dump();
}

TEST_F(StartedInHome, WithoutTheSandboxTheCodeRunsWhereTheAgentWasStarted) {
  // --sandbox none confines nothing, so no workspace is refused (before: "workspace ... refused: it is your home
  // directory", every block).
  ScriptedServer server(json::array({block(), say("Done.")}));
  RunResult r = run(server, home_, {"--sandbox", "none", "-y", "make a file"});
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  EXPECT_TRUE(exists(home_ + "/made-here")) << json(r.out).dump();
  EXPECT_TRUE(fresh_workspaces(home_).empty());
  EXPECT_EQ(std::string::npos, r.out.find("refused")) << json(r.out).dump();
}

}  // namespace
}  // namespace oishell::agent::test
