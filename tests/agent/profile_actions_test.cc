// --profiles, --local_models, --reset_profile [NAME] and the first run's default.yaml, in a temporary HOME and
// XDG_CONFIG_HOME: the functions, and the real `interpreter` binary.
#include "agent/config/profile_actions.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "agent/host/atomic_file.h"
#include "agent/config/profile.h"
#include "agent/config/profile_builtin.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

using test::read_text;
using test::RunOptions;
using test::RunResult;
using test::TempDir;

bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

class ProfileActions : public ::testing::Test {
 protected:
  EnvLookup env() {
    return [this](const std::string& k) -> std::optional<std::string> {
      if (k == "HOME") return home_.path();
      if (k == "XDG_CONFIG_HOME") return home_.path() + "/.config";
      return std::nullopt;
    };
  }
  std::string dir() { return home_.path() + "/.config/open-interpreter/profiles"; }
  RunResult run(std::vector<std::string> args, std::map<std::string, std::string> extra_env = {}) {
    RunOptions o;
    o.args = std::move(args);
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.env = std::move(extra_env);
    o.timeout_ms = 30000;
    RunResult r = test::run_interpreter(o);
    EXPECT_FALSE(r.timed_out) << r.out << r.err;
    return r;
  }
  TempDir home_, workspace_;
};

TEST_F(ProfileActions, ResetWritesTheBuiltInAndKeepsAChangedFileAsBak) {
  auto lines = reset_profiles("fast", env());
  ASSERT_TRUE(lines) << lines.status().message();
  ASSERT_EQ(1u, lines->size());
  EXPECT_EQ(std::string(*builtin_profile("fast")), read_text(dir() + "/fast.yaml"));
  EXPECT_FALSE(exists(dir() + "/fast.yaml.bak"));  // nothing was there to keep
  // Unchanged: left alone, no .bak.
  lines = reset_profiles("fast.yaml", env());
  ASSERT_TRUE(lines);
  EXPECT_NE(std::string::npos, (*lines)[0].find("already")) << (*lines)[0];
  EXPECT_FALSE(exists(dir() + "/fast.yaml.bak"));
  // Changed by the user: kept as .bak, then rewritten.
  ASSERT_TRUE(write_file_atomic(dir() + "/fast.yaml", "llm:\n  model: mine\n", 0644).is_ok());
  lines = reset_profiles("fast", env());
  ASSERT_TRUE(lines);
  EXPECT_NE(std::string::npos, (*lines)[0].find("fast.yaml.bak")) << (*lines)[0];
  EXPECT_EQ("llm:\n  model: mine\n", read_text(dir() + "/fast.yaml.bak"));
  EXPECT_EQ(std::string(*builtin_profile("fast")), read_text(dir() + "/fast.yaml"));
  // Not a built-in one: an error naming them.
  auto bad = reset_profiles("mine", env());
  ASSERT_FALSE(bad);
  EXPECT_NE(std::string::npos, bad.status().message().find("not a built-in profile"));
}

TEST_F(ProfileActions, ResetWithoutANameWritesEveryBuiltInProfile) {
  auto lines = reset_profiles("", env());
  ASSERT_TRUE(lines) << lines.status().message();
  EXPECT_EQ(builtin_profile_names().size(), lines->size());
  for (auto name : builtin_profile_names()) {
    std::string file = dir() + "/" + std::string(name) + ".yaml";
    EXPECT_EQ(std::string(*builtin_profile(name)), read_text(file)) << file;
    auto p = load_named_profile(std::string(name), env());  // the user's file now, the same text
    ASSERT_TRUE(p) << p.status().message();
    EXPECT_EQ(file, p->path);
  }
}

TEST_F(ProfileActions, DefaultYamlIsWrittenOnceAndLoadsWithoutComplaint) {
  bool written = false;
  ASSERT_TRUE(ensure_default_profile(env(), &written).is_ok());
  EXPECT_TRUE(written);
  std::string text = read_text(dir() + "/default.yaml");
  EXPECT_EQ(std::string(*builtin_profile("default")), text);
  for (const char* documented : {"# sandbox:", "# policy:", "# max_turns:", "version: 0.2.5"}) {
    EXPECT_NE(std::string::npos, text.find(documented)) << documented;
  }
  auto p = load_profile_file(dir() + "/default.yaml");
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_TRUE(p->warnings.empty());
  EXPECT_TRUE(p->notes.empty());
  EXPECT_EQ(dir() + "/default.yaml", default_profile_path(env()).value_or(""));
  // The user's own edits are never overwritten.
  ASSERT_TRUE(write_file_atomic(dir() + "/default.yaml", "llm:\n  model: mine\n", 0644).is_ok());
  ASSERT_TRUE(ensure_default_profile(env(), &written).is_ok());
  EXPECT_FALSE(written);
  EXPECT_EQ("llm:\n  model: mine\n", read_text(dir() + "/default.yaml"));
}

TEST_F(ProfileActions, TheInterpreterPrintsTheFoldersAndNeverOpensThemWithoutATerminal) {
  // A stand-in xdg-open that leaves a mark; DISPLAY is set, but stdout is a pipe: it must not run.
  std::string bin = home_.path() + "/bin";
  ASSERT_TRUE(make_dirs(bin, 0755).is_ok());
  std::string mark = home_.path() + "/xdg-open-ran";
  ASSERT_TRUE(write_file_atomic(bin + "/xdg-open", "#!/bin/sh\ntouch " + mark + "\n", 0755).is_ok());
  std::map<std::string, std::string> env = {{"DISPLAY", ":0"}, {"PATH", bin + ":/usr/local/bin:/usr/bin:/bin"}};
  RunResult r = run({"--profiles"}, env);
  EXPECT_EQ(0, r.exit_code) << r.err;
  EXPECT_EQ(dir() + "\n", r.out);
  EXPECT_TRUE(std::filesystem::is_directory(dir()));
  r = run({"--local_models"}, env);
  EXPECT_EQ(0, r.exit_code) << r.err;
  EXPECT_EQ(home_.path() + "/.config/open-interpreter/models\n", r.out);
  EXPECT_TRUE(std::filesystem::is_directory(home_.path() + "/.config/open-interpreter/models"));
  EXPECT_FALSE(exists(mark));
}

TEST_F(ProfileActions, TheInterpreterResetsProfilesAndWritesDefaultYamlOnFirstRun) {
  RunResult r = run({"--reset_profile"});
  EXPECT_EQ(0, r.exit_code) << r.err;
  for (auto name : builtin_profile_names()) EXPECT_TRUE(exists(dir() + "/" + std::string(name) + ".yaml")) << name;
  ASSERT_TRUE(write_file_atomic(dir() + "/groq.yaml", "llm:\n  model: mine\n", 0644).is_ok());
  r = run({"--reset_profile", "groq"});
  EXPECT_EQ(0, r.exit_code) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("groq.yaml.bak")) << r.out;
  EXPECT_EQ("llm:\n  model: mine\n", read_text(dir() + "/groq.yaml.bak"));
  r = run({"--reset_profile", "nonsense"});
  EXPECT_EQ(2, r.exit_code);
  EXPECT_NE(std::string::npos, r.err.find("not a built-in profile")) << r.err;

  // A first run in a fresh home writes default.yaml (and reads it: no complaint about it).
  TempDir fresh;
  RunOptions o;
  o.args = {"--plain", "--sandbox", "none"};
  o.cwd = workspace_.path();
  o.home = fresh.path();
  r = test::run_interpreter(o);
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  std::string written = fresh.path() + "/.config/open-interpreter/profiles/default.yaml";
  EXPECT_EQ(std::string(*builtin_profile("default")), read_text(written));
  EXPECT_EQ(std::string::npos, r.out.find("default.yaml:")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("No language model is configured")) << r.out;
}

TEST_F(ProfileActions, TheInterpreterShowsTheNotesOfAProfileAndRefusesATypo) {
  ASSERT_TRUE(make_dirs(dir(), 0755).is_ok());
  ASSERT_TRUE(write_file_atomic(dir() + "/mine.yaml", "llm:\n  model: x\ndisable_telemetry: true\n", 0644)
                  .is_ok());
  // (A key, so that the public service's model `x` is a configuration that can start; stdin is empty: no request.)
  RunResult r = run({"-p", "mine", "--plain", "--sandbox", "none"}, {{"OPENAI_API_KEY", "sk-never-used"}});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("`disable_telemetry`: this agent sends no telemetry")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("computer use")) << r.out;
  // A profile in the workspace is text sandboxed code may have written: quoted escaped.
  ASSERT_TRUE(write_file_atomic(workspace_.path() + "/evil.yaml", "llm:\n  modle\x1b]0;pwned\x07: x\n", 0644).is_ok());
  r = run({"-p", workspace_.path() + "/evil.yaml", "--plain", "--sandbox", "none"});
  EXPECT_EQ(2, r.exit_code);
  EXPECT_EQ(std::string::npos, r.err.find('\x1b')) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("unknown key")) << r.err;
}

}  // namespace
}  // namespace oishell::agent
