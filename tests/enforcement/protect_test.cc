// Files the host runs later (git hooks, .git/config) stay read-only inside the writable workspace: by default the
// whole .git (filesystem.git: read_only), with `git: commit` what git executes or obeys.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

std::string commit_mode(const SandboxWorkspace& w) {
  std::string path = w.path("commit.yaml");
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(("version: 1\nextends: " + w.policy() + "\nfilesystem:\n  git: commit\n").c_str(), f);
  std::fclose(f);
  return path;
}

TEST(Protect, PlantingAGitHook) {
  SandboxWorkspace w;
  EXPECT_EQ("ok", probe_on_host({"open", w.ws() + "/.git/hooks/pre-commit-host", "create"}));
  EXPECT_EQ("EROFS", w.probe({"open", w.ws() + "/.git/hooks/pre-commit", "create"}));
  EXPECT_EQ("EROFS", w.probe({"write", w.ws() + "/.git/hooks/post-checkout", "#!/bin/sh\n"}));
  EXPECT_EQ("EROFS", w.probe({"write", w.ws() + "/.git/HEAD", "ref: refs/heads/other\n"}));
  // git: commit — the hooks stay read-only, the rest of .git is writable (git commits inside).
  std::vector<std::string> commit = {"--policy", commit_mode(w)};
  EXPECT_EQ("EROFS", w.probe({"open", w.ws() + "/.git/hooks/pre-commit", "create"}, commit));
  EXPECT_EQ("ok", w.probe({"write", w.ws() + "/.git/HEAD", "ref: refs/heads/other\n"}, commit));
}

TEST(Protect, ChangingGitConfig) {
  SandboxWorkspace w;
  EXPECT_EQ("EROFS", w.probe({"write", w.ws() + "/.git/config", "[core]\n\tfsmonitor = evil\n"}));
  EXPECT_EQ("EROFS", w.probe({"truncate", w.ws() + "/.git/config"}));
  EXPECT_EQ("EROFS", w.probe({"rename", w.ws() + "/.git/config", w.ws() + "/.git/config.old"}));
  // A mount point cannot be renamed away or deleted and replaced: .git itself, and in commit mode its config.
  EXPECT_EQ("EBUSY", w.probe({"rename", w.ws() + "/.git", w.ws() + "/.git2"}));
  std::vector<std::string> commit = {"--policy", commit_mode(w)};
  EXPECT_EQ("EROFS", w.probe({"write", w.ws() + "/.git/config", "[core]\n\tfsmonitor = evil\n"}, commit));
  EXPECT_EQ("EBUSY", w.probe({"rename", w.ws() + "/.git/config", w.ws() + "/.git/config.old"}, commit));
  EXPECT_EQ("EBUSY", w.probe({"unlink", w.ws() + "/.git/config"}, commit));
  EXPECT_EQ("EBUSY", w.probe({"rename", w.ws() + "/.git", w.ws() + "/.git2"}, commit));
  EXPECT_EQ("[core]\n", SandboxWorkspace::read(w.ws() + "/.git/config"));
  EXPECT_EQ("ok", w.probe({"write", w.ws() + "/public.txt", "changed"}));
}

}  // namespace
}  // namespace oishell::test
