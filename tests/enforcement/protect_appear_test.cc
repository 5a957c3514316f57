// A protected path that did not exist at start is writable through the workspace (there was nothing to bind
// read-only), and a parent of a protected path can be renamed away and recreated. Neither is stopped; both are
// reported at exit, on stderr and in the exit event, so the user learns before the host runs the file.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

// The `protected_changed` list of the exit event of `events` (a JSON-lines file); null when there is no exit event.
nlohmann::json exit_changes(const std::string& events) {
  std::ifstream in(events);
  std::string line;
  while (std::getline(in, line)) {
    auto e = nlohmann::json::parse(line, nullptr, false);
    if (!e.is_discarded() && e.value("event", "") == "exit") {
      return e.contains("protected_changed") ? e["protected_changed"] : nlohmann::json::array();
    }
  }
  return nullptr;
}

bool lists(const nlohmann::json& changes, const std::string& entry) {
  if (!changes.is_array()) return false;
  for (const auto& c : changes) {
    if (c.is_string() && c.get<std::string>() == entry) return true;
  }
  return false;
}

std::string stderr_line(const std::string& entry) {
  return "oishell: protected path changed during the run: " + entry + "\n";
}

TEST(ProtectAppear, CreatingEnvrcIsAllowedButReported) {
  SandboxWorkspace w;
  std::string events = w.path("events.jsonl");
  SandboxRun r = run_sandboxed(w.args({"--events", events}),
                               {"/bin/sh", "-c", "echo 'export EVIL=1' > " + w.ws() + "/.envrc"});
  ASSERT_EQ(0, r.status) << r.err;  // a normal file in the writable workspace: allowed
  EXPECT_EQ("export EVIL=1\n", SandboxWorkspace::read(w.ws() + "/.envrc"));
  std::string entry = w.ws() + "/.envrc (created)";
  EXPECT_NE(std::string::npos, r.err.find(stderr_line(entry))) << r.err;
  nlohmann::json changes = exit_changes(events);
  EXPECT_TRUE(lists(changes, entry)) << changes.dump();
  EXPECT_EQ(1u, changes.size()) << changes.dump();  // nothing else is named
}

TEST(ProtectAppear, DotGitCannotBeReplacedByADirectoryOrALink) {
  SandboxWorkspace w;
  std::string events = w.path("events.jsonl");
  // Before .git was a mount point, both renames succeeded and the planted hook was only reported after the run.
  SandboxRun r = run_sandboxed(
      w.args({"--events", events}),
      {"/bin/sh", "-c", "cd " + w.ws() + " && mkdir -p evil/hooks && echo x > evil/hooks/pre-commit && "
                        "(mv .git .git2 || echo mv-refused) && (ln -s evil .git || echo link-refused)"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("mv-refused")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("link-refused")) << r.out;  // .git is still there
  EXPECT_EQ("[core]\n", SandboxWorkspace::read(w.ws() + "/.git/config"));
  EXPECT_EQ("", SandboxWorkspace::read(w.ws() + "/.git/hooks/pre-commit"));
}

TEST(ProtectAppear, UntouchedProtectedPathsReportNothing) {
  SandboxWorkspace w;
  std::string events = w.path("events.jsonl");
  // The neighbour: ordinary work in the workspace, and reading .git.
  SandboxRun r = run_sandboxed(w.args({"--events", events}),
                               {"/bin/sh", "-c",
                                "echo changed > " + w.ws() + "/public.txt && cat " + w.ws() + "/.git/config"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ("[core]\n", r.out);
  EXPECT_EQ(std::string::npos, r.err.find("protected path")) << r.err;
  nlohmann::json changes = exit_changes(events);
  ASSERT_TRUE(changes.is_array()) << "no exit event in " << SandboxWorkspace::read(events);
  EXPECT_TRUE(changes.empty()) << changes.dump();
}

}  // namespace
}  // namespace oishell::test
