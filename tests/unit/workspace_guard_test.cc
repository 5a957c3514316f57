// What a policy may make writable, and the git metadata of the workspace: compiled against a fake host.
// Without these rules, `--workspace ~` made ~/.bashrc, ~/.local/bin and ~/.gitconfig writable from inside, and a
// writable `.git` let sandboxed code plant a hook or a core.fsmonitor that the user's next host `git status` runs.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/compiler.h"
#include "policy/explain.h"
#include "policy/host_fs.h"
#include "policy/mount_plan.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

Result<SandboxSpec> compile_text(const std::string& text, const CompileContext& context,
                                 const PolicyOverrides& overrides = {}) {
  auto loaded = load_text(text);
  if (!loaded.ok()) return Status::error(policy::format_diagnostics(loaded.errors));
  std::vector<policy::Diagnostic> errors;
  policy::apply_overrides(loaded.policy, overrides, context, errors);
  if (!errors.empty()) return Status::error(policy::format_diagnostics(errors));
  return policy::compile(loaded.policy, context);
}

std::vector<std::string> targets_of(const SandboxSpec& spec, MountStep::Kind kind) {
  std::vector<std::string> out;
  for (const auto& m : spec.mounts) {
    if (m.kind == kind) out.push_back(m.target);
  }
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// A home with the files hosts run or trust, and ordinary work.
FakeHostFs home_host() {
  FakeHostFs fs = fake_host();
  fs.file("/home/user/.bashrc").file("/home/user/.profile").dir("/home/user/.local/bin").file("/home/user/.gitconfig");
  fs.dir("/home/user/bin").dir("/home/user/Documents").file("/home/user/notes.txt");
  fs.dir("/var/tmp/proj").dir("/var/lib/app").dir("/opt/tool").dir("/mnt/data/proj").dir("/usr/local/src/proj");
  return fs;
}

TEST(WritableRefusal, TheHomeOrAnAncestorIsRefusedWithTheOverrideNamed) {
  FakeHostFs fs = home_host();
  CompileContext c = fake_context();
  c.fs = &fs;
  for (const char* ws : {"/home/user", "/home"}) {
    auto spec = compile_text(std::string("version: 1\nextends: default\nfilesystem: {workspace: ") + ws + "}\n", c);
    ASSERT_FALSE(spec.is_ok()) << ws;
    EXPECT_NE(std::string::npos, spec.status().message().find("refused")) << spec.status().message();
    if (std::string(ws) == "/home/user") {
      EXPECT_NE(std::string::npos, spec.status().message().find("--allow-home-workspace")) << spec.status().message();
    }
  }
  // The neighbour: a project inside the home is an ordinary workspace.
  EXPECT_TRUE(compile_text("version: 1\nextends: default\nfilesystem: {workspace: /home/user/project}\n", c).is_ok());
}

TEST(WritableRefusal, SystemDirectoriesAndSharedRootsAreRefused) {
  FakeHostFs fs = home_host();
  CompileContext c = fake_context();
  c.fs = &fs;
  for (const char* ws : {"/etc", "/usr/local/src/proj", "/var/lib/app", "/opt/tool", "/var/tmp", "/tmp", "/var"}) {
    auto spec = compile_text(std::string("version: 1\nfilesystem: {workspace: \"") + ws + "\"}\n", c);
    EXPECT_FALSE(spec.is_ok()) << ws << " was accepted";
  }
  for (const char* ws : {"/var/tmp/proj", "/mnt/data/proj"}) {
    auto spec = compile_text(std::string("version: 1\nfilesystem: {workspace: \"") + ws + "\"}\n", c);
    EXPECT_TRUE(spec.is_ok()) << ws << ": " << spec.status().message();
  }
  // A read-only workspace writes nothing: only the kernel's trees and / stay refused.
  EXPECT_TRUE(compile_text("version: 1\nfilesystem: {workspace: /etc, workspace_read_only: true}\n", c).is_ok());
  EXPECT_FALSE(compile_text("version: 1\nfilesystem: {workspace: /proc, workspace_read_only: true}\n", c).is_ok());
}

TEST(WritableRefusal, ReadWriteExtrasFollowTheSameRules) {
  FakeHostFs fs = home_host();
  CompileContext c = fake_context();
  c.fs = &fs;
  PolicyOverrides home;
  home.read_write = {"/home/user"};
  auto spec = compile_text("version: 1\nextends: default\n", c, home);
  ASSERT_FALSE(spec.is_ok());
  EXPECT_NE(std::string::npos, spec.status().message().find("filesystem.read_write: /home/user cannot be writable"))
      << spec.status().message();
  PolicyOverrides etc;
  etc.read_write = {"/etc"};
  EXPECT_FALSE(compile_text("version: 1\nextends: default\n", c, etc).is_ok());
  PolicyOverrides data;
  data.read_write = {"/home/user/datasets"};
  EXPECT_TRUE(compile_text("version: 1\nextends: default\n", c, data).is_ok());
}

TEST(WritableRefusal, AnAllowedHomeKeepsWhatTheHostRunsReadOnly) {
  FakeHostFs fs = home_host();
  CompileContext c = fake_context();
  c.fs = &fs;
  PolicyOverrides allow;
  allow.workspace = "/home/user";
  allow.allow_home_workspace = true;
  auto spec = compile_text("version: 1\nextends: default\n", c, allow);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  EXPECT_EQ("/home/user", spec->home_exposed);
  // The home read-only over itself, right after the workspace's bind and before its writable entries.
  auto mounts = spec->mounts;
  auto index = [&](MountStep::Kind kind, const std::string& target) {
    for (size_t i = 0; i < mounts.size(); ++i) {
      if (mounts[i].kind == kind && mounts[i].target == target) return static_cast<long>(i);
    }
    return -1L;
  };
  long ws = index(MountStep::Kind::bind_rw, "/home/user");
  long ro = index(MountStep::Kind::protect, "/home/user");
  ASSERT_GE(ws, 0);
  ASSERT_GT(ro, ws);
  EXPECT_GT(index(MountStep::Kind::bind_rw, "/home/user/Documents"), ro);
  EXPECT_GT(index(MountStep::Kind::bind_rw, "/home/user/notes.txt"), ro);
  EXPECT_GT(index(MountStep::Kind::bind_rw, "/home/user/project"), ro);
  // Not made writable again: dotfiles, dot-directories, ~/bin; hidden secrets stay hidden.
  auto rw = targets_of(*spec, MountStep::Kind::bind_rw);
  for (const char* kept : {"/home/user/.bashrc", "/home/user/.profile", "/home/user/.local", "/home/user/.gitconfig",
                           "/home/user/bin", "/home/user/.ssh"}) {
    EXPECT_FALSE(has(rw, kept)) << kept;
  }
  EXPECT_TRUE(has(targets_of(*spec, MountStep::Kind::hide), "/home/user/.ssh"));
  // No tmpfs over the real home, and explain says what is visible.
  EXPECT_FALSE(has(targets_of(*spec, MountStep::Kind::tmpfs), "/home/user"));
  auto loaded = load_text("version: 1\nextends: default\n");
  std::string text = policy::explain(loaded.policy, *spec);
  EXPECT_NE(std::string::npos, text.find("The real home directory /home/user is visible")) << text;
  EXPECT_EQ(std::string::npos, text.find("nothing of the real home is visible")) << text;
}

TEST(GitMetadata, ReadOnlyByDefault) {
  auto spec = compile_policy(PolicySource{"", "default"}, PolicyOverrides{}, fake_context());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  EXPECT_EQ(GitMode::read_only, spec->git);
  auto protects = targets_of(*spec, MountStep::Kind::protect);
  EXPECT_TRUE(has(protects, "/home/user/project/.git"));
  // The whole of .git is one read-only mount: nothing inside needs a step of its own.
  EXPECT_FALSE(has(protects, "/home/user/project/.git/hooks"));
}

TEST(GitMetadata, CommitModeLeavesTheObjectStoreWritable) {
  FakeHostFs fs = fake_host();
  fs.dir("/home/user/project/.git/objects").dir("/home/user/project/.git/refs").dir("/home/user/project/.git/info");
  fs.file("/home/user/project/.git/HEAD").dir("/home/user/project/.git/modules/sub/hooks");
  CompileContext c = fake_context();
  c.fs = &fs;
  auto spec = compile_text("version: 1\nextends: default\nfilesystem: {git: commit}\n", c);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  auto protects = targets_of(*spec, MountStep::Kind::protect);
  for (const char* p : {"config", "hooks", "info", "modules"}) {
    EXPECT_TRUE(has(protects, std::string("/home/user/project/.git/") + p)) << p;
  }
  for (const char* p : {"", "/objects", "/refs", "/HEAD", "/commondir"}) {
    EXPECT_FALSE(has(protects, std::string("/home/user/project/.git") + p)) << p;
  }
  // .git itself is bound over itself, writable, so that it cannot be renamed away and replaced (EBUSY).
  EXPECT_TRUE(has(targets_of(*spec, MountStep::Kind::bind_rw), "/home/user/project/.git"));
}

TEST(GitMetadata, AGitFileAndTheGitDirsItLeadsToAreReadOnly) {
  // A linked worktree checked out in the workspace, whose git dir and common dir are in the workspace too.
  FakeHostFs fs = fake_host();
  fs.dir("/home/user/wt").file("/home/user/wt/.git", "gitdir: /home/user/wt/main/.git/worktrees/wt\n");
  fs.dir("/home/user/wt/main/.git/hooks").file("/home/user/wt/main/.git/config");
  fs.file("/home/user/wt/main/.git/worktrees/wt/commondir", "../..\n");
  CompileContext c = fake_context();
  c.fs = &fs;
  c.cwd = "/home/user/wt";
  auto spec = compile_text("version: 1\nextends: default\n", c);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  auto protects = targets_of(*spec, MountStep::Kind::protect);
  EXPECT_TRUE(has(protects, "/home/user/wt/.git"));
  EXPECT_TRUE(has(protects, "/home/user/wt/main/.git/worktrees/wt"));
  EXPECT_TRUE(has(protects, "/home/user/wt/main/.git"));
}

TEST(GitMetadata, AReadOnlyWorkspaceNeedsNothing) {
  auto spec = compile_text("version: 1\nextends: default\nfilesystem: {workspace_read_only: true}\n", fake_context());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  EXPECT_TRUE(targets_of(*spec, MountStep::Kind::protect).empty());
}

TEST(GitMetadata, UnknownModeIsAnError) {
  auto loaded = load_text("version: 1\nfilesystem: {git: writable}\n");
  EXPECT_FALSE(loaded.ok());
}

}  // namespace
}  // namespace oishell::testing
