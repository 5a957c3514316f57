// Path verdicts (policy/path_verdict.h): which part of a compiled policy decides one path, read off the mount plan,
// and what would allow it. Each refused case is checked beside its allowed neighbour.
#include "policy/path_verdict.h"

#include <gtest/gtest.h>

#include "policy/compiler.h"
#include "tests/unit/test_util.h"

namespace oishell::policy {
namespace {

SandboxSpec spec_like_default() {
  SandboxSpec spec;
  spec.workspace = "/home/u/project";
  spec.cwd = "/home/u/project";
  spec.home_path = "/home/u";
  MountStep usr{MountStep::Kind::bind_ro, "/usr", "/usr"};
  usr.system = true;
  spec.mounts = {usr,
                 {MountStep::Kind::tmpfs, "", "/home/u"},
                 {MountStep::Kind::bind_rw, "/home/u/project", "/home/u/project"},
                 {MountStep::Kind::protect, "/home/u/project/.git", "/home/u/project/.git"},
                 {MountStep::Kind::bind_ro, "/srv/data", "/srv/data"},
                 {MountStep::Kind::hide, "", "/srv/data/secrets"},
                 {MountStep::Kind::tmpfs, "", "/tmp"}};
  return spec;
}

TEST(PathVerdict, HiddenPathsAreRefusedAndNamedWithTheirRule) {
  const auto spec = spec_like_default();
  auto v = path_verdict(spec, "/srv/data/secrets/key", PathAccess::read);
  EXPECT_EQ(v.decision, PathVerdict::Decision::hidden);
  EXPECT_TRUE(v.denied);
  EXPECT_EQ(v.rule, "filesystem.hide");
  EXPECT_EQ(describe(v).rfind("/srv/data/secrets/key is hidden by the policy (filesystem.hide: /srv/data/secrets)",
                              0),
            0u)
      << describe(v);
  // The neighbour beside it is readable, not writable.
  auto beside = path_verdict(spec, "/srv/data/table.csv", PathAccess::read);
  EXPECT_FALSE(beside.denied);
  EXPECT_EQ(describe(beside), "/srv/data/table.csv is readable (filesystem.read_only)");
  auto write = path_verdict(spec, "/srv/data/table.csv", PathAccess::write);
  EXPECT_TRUE(write.denied);
  EXPECT_EQ(describe(write), "/srv/data/table.csv is read-only (filesystem.read_only: /srv/data); to allow it: "
                             "`filesystem: {read_write: [/srv/data/table.csv]}` in a policy that extends this one (or "
                             "`--rw /srv/data/table.csv` for one run)");
}

TEST(PathVerdict, TheWorkspaceIsWritableAndItsGitMetadataIsNot) {
  const auto spec = spec_like_default();
  auto src = path_verdict(spec, "src/main.py", PathAccess::write);  // relative: against the working directory
  EXPECT_FALSE(src.denied);
  EXPECT_EQ(src.path, "/home/u/project/src/main.py");
  EXPECT_EQ(src.rule, "filesystem.workspace");
  auto hook = path_verdict(spec, "/home/u/project/.git/hooks/pre-commit", PathAccess::write);
  EXPECT_TRUE(hook.denied);
  EXPECT_EQ(hook.decision, PathVerdict::Decision::protected_);
  EXPECT_EQ(hook.rule, "filesystem.git");
  EXPECT_FALSE(path_verdict(spec, "/home/u/project/.git/HEAD", PathAccess::read).denied);
}

TEST(PathVerdict, SystemDirectoriesAndUnboundPathsSayWhatCanAndCannotAllowThem) {
  const auto spec = spec_like_default();
  auto usr = path_verdict(spec, "/usr/bin/python3", PathAccess::write);
  EXPECT_TRUE(usr.denied);
  EXPECT_EQ(usr.rule, "filesystem (system directory)");
  EXPECT_EQ(describe(usr), "/usr/bin/python3 is read-only: system directories are never writable inside (/usr); no "
                           "policy line allows it");
  auto elsewhere = path_verdict(spec, "/opt/tool/bin", PathAccess::read);
  EXPECT_EQ(elsewhere.decision, PathVerdict::Decision::outside);
  EXPECT_TRUE(elsewhere.denied);
  EXPECT_NE(elsewhere.allow.find("`filesystem: {read_only: [/opt/tool/bin]}`"), std::string::npos) << elsewhere.allow;
  // The home is the sandbox's own scratch: written there, but the host's dotfiles are not seen.
  auto rc = path_verdict(spec, "/home/u/.bashrc", PathAccess::read);
  EXPECT_EQ(rc.decision, PathVerdict::Decision::scratch);
  EXPECT_TRUE(rc.denied);
  EXPECT_EQ(rc.rule, "filesystem.home");
  EXPECT_FALSE(path_verdict(spec, "/tmp/out.txt", PathAccess::write).denied);
}

// The advice is tried before it is given: the policy hides ~/.ssh, which the plan drops while the home is the
// sandbox's scratch, so granting ~/.ssh/config would still show nothing: the answer is "hidden", not a grant. A
// directory the policy does not hide gets the grant as advice (the neighbour).
TEST(PathVerdict, AdviceIsTriedAgainstThePolicyFirst) {
  auto loaded = testing::load_text("version: 1\nfilesystem:\n  hide: [~/.ssh]\n");
  ASSERT_TRUE(loaded.ok()) << format_diagnostics(loaded.errors);
  const CompileContext context = testing::fake_context();
  auto spec = compile(loaded.policy, context);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  auto ssh = explain_path(loaded.policy, context, *spec, "/home/user/.ssh", PathAccess::read);
  EXPECT_EQ(ssh.decision, PathVerdict::Decision::hidden) << describe(ssh);
  EXPECT_TRUE(ssh.denied);
  EXPECT_EQ(ssh.rule, "filesystem.hide");
  auto aws = explain_path(loaded.policy, context, *spec, "/home/user/datasets", PathAccess::read);
  EXPECT_TRUE(aws.denied);
  EXPECT_NE(aws.allow.find("`filesystem: {read_only: [/home/user/datasets]}`"), std::string::npos) << describe(aws);
}

}  // namespace
}  // namespace oishell::policy
