// Files the host runs later (git hooks, .git/config) stay read-only inside the writable workspace.
#include <gtest/gtest.h>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

TEST(Protect, PlantingAGitHook) {
  SandboxWorkspace w;
  EXPECT_EQ("ok", probe_on_host({"open", w.ws() + "/.git/hooks/pre-commit-host", "create"}));
  EXPECT_EQ("EROFS", w.probe({"open", w.ws() + "/.git/hooks/pre-commit", "create"}));
  EXPECT_EQ("EROFS", w.probe({"write", w.ws() + "/.git/hooks/post-checkout", "#!/bin/sh\n"}));
  // The rest of .git stays writable (git works inside).
  EXPECT_EQ("ok", w.probe({"write", w.ws() + "/.git/HEAD", "ref: refs/heads/other\n"}));
}

TEST(Protect, ChangingGitConfig) {
  SandboxWorkspace w;
  EXPECT_EQ("EROFS", w.probe({"write", w.ws() + "/.git/config", "[core]\n\tfsmonitor = evil\n"}));
  EXPECT_EQ("EROFS", w.probe({"truncate", w.ws() + "/.git/config"}));
  // A mount point cannot be renamed away or deleted and replaced.
  EXPECT_EQ("EBUSY", w.probe({"rename", w.ws() + "/.git/config", w.ws() + "/.git/config.old"}));
  EXPECT_EQ("EBUSY", w.probe({"unlink", w.ws() + "/.git/config"}));
  EXPECT_EQ("[core]\n", SandboxWorkspace::read(w.ws() + "/.git/config"));
  EXPECT_EQ("ok", w.probe({"write", w.ws() + "/public.txt", "changed"}));
}

}  // namespace
}  // namespace oishell::test
