// Nothing planted inside runs outside, through git: after each sandboxed script, the test does what the user does
// next on the host — `git status` and `git commit` in the workspace (and in the subdirectory a route plants in) —
// and asserts that no planted command ran (a marker file stays absent). Without the sandbox's read-only .git and
// its repo guard, each script below makes the host's git run `touch MARKER`.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"

namespace oishell::test {
namespace {

// A repository with one commit, made on the host, with a policy that extends the default profile.
class GitWorkspace {
 public:
  explicit GitWorkspace(bool with_repo = true) {
    ::mkdir(ws().c_str(), 0755);
    dir_.write("ws/file.txt", "one\n");
    if (with_repo) {
      EXPECT_EQ(0, host_git("init -q -b main && git add file.txt && git commit -qm init")) << "host git";
    }
  }
  std::string ws() const { return dir_.path() + "/ws"; }
  std::string marker() const { return dir_.path() + "/MARKER"; }
  bool marker_exists() const { return ::access(marker().c_str(), F_OK) == 0; }
  std::string policy(const std::string& extra = "") const {
    return dir_.write("policy.yaml", "version: 1\nextends: default\n" + extra);
  }

  // `git ARGS` on the host in ws/SUBDIR, as the user runs it, with no global or system configuration.
  int host_git(const std::string& args, const std::string& subdir = "") const {
    std::string dir = subdir.empty() ? ws() : ws() + "/" + subdir;
    std::string command = "cd '" + dir + "' && export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 "
                          "GIT_AUTHOR_NAME=u GIT_AUTHOR_EMAIL=u@example.com GIT_COMMITTER_NAME=u "
                          "GIT_COMMITTER_EMAIL=u@example.com && (git " + args + ") >/dev/null 2>&1";
    return std::system(command.c_str());
  }

  // The script inside the sandbox, in the workspace, with `$M` the marker's path.
  SandboxRun run(const std::string& script, const std::string& policy_extra = "") const {
    std::string env = "export M='" + marker() + "' GIT_AUTHOR_NAME=s GIT_AUTHOR_EMAIL=s@example.com "
                      "GIT_COMMITTER_NAME=s GIT_COMMITTER_EMAIL=s@example.com; cd '" + ws() + "'; ";
    return run_sandboxed({"--policy", policy(policy_extra), "--workspace", ws()}, {"/bin/sh", "-c", env + script});
  }

  // What the user does next: status and commit, here and in `subdir`; true when nothing planted ran.
  bool host_git_runs_nothing(const std::string& subdir = "") const {
    host_git("status");
    host_git("commit -qam user-commit --allow-empty");
    if (!subdir.empty()) {
      host_git("status", subdir);
      host_git("commit -qam user-commit --allow-empty", subdir);
    }
    return !marker_exists();
  }

 private:
  TempDir dir_;
};

TEST(Git, DotGitCannotBeSwappedOrWrittenAndGitStillReadsInside) {
  GitWorkspace w;
  SandboxRun r = w.run(
      "mv .git .git2 && echo mv=ok || echo mv=refused; "
      "printf '[core]\\n\\tfsmonitor = touch $M\\n' >> .git/config && echo config=ok || echo config=refused; "
      "printf '#!/bin/sh\\ntouch $M\\n' > .git/hooks/pre-commit && echo hook=ok || echo hook=refused; "
      "echo ../planted > .git/commondir && echo commondir=ok || echo commondir=refused; "
      "mkdir -p .git/worktrees/w && echo ../planted > .git/worktrees/w/commondir && echo worktree=ok || "
      "echo worktree=refused; "
      "mkdir -p .git/modules/m && printf '[core]\\n\\tfsmonitor = touch $M\\n' > .git/modules/m/config && "
      "echo module=ok || echo module=refused; "
      "echo two >> file.txt; git status --short; git diff --stat | tail -1; git log --oneline | wc -l");
  ASSERT_EQ(0, r.status) << r.err;
  // mv: EBUSY (a mount point); writes: EROFS. Without the sandbox each succeeds.
  EXPECT_NE(std::string::npos, r.out.find("mv=refused")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("config=refused")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("hook=refused")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("commondir=refused")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("worktree=refused")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("module=refused")) << r.out;
  EXPECT_NE(std::string::npos, r.err.find("Device or resource busy")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("Read-only file system")) << r.err;
  // The allowed neighbours: git reads the repository inside.
  EXPECT_NE(std::string::npos, r.out.find(" M file.txt")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("1 file changed")) << r.out;
  EXPECT_TRUE(w.host_git_runs_nothing());
}

TEST(Git, ARepositoryPlantedInASubdirectoryIsNeutralised) {
  GitWorkspace w;
  // Every redirection route into a directory the sandbox controls: a `.git` file (gitdir:), and a git dir whose
  // config and hooks are planted.
  SandboxRun r = w.run(
      "mkdir -p sub planted/hooks planted/objects planted/refs && echo 'ref: refs/heads/main' > planted/HEAD && "
      "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch $M\\n' > planted/config && "
      "printf '#!/bin/sh\\ntouch $M\\n' > planted/hooks/pre-commit && chmod +x planted/hooks/pre-commit && "
      "echo 'gitdir: ../planted' > sub/.git && echo planted");
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("git repository neutralised")) << r.err;
  EXPECT_TRUE(w.host_git_runs_nothing("sub"));
}

TEST(Git, ANewRepositoryKeepsWorkingWithoutWhatGitWouldRun) {
  GitWorkspace w(/*with_repo=*/false);  // no repository at start
  SandboxRun r = w.run(
      "git init -q -b main && git add file.txt && git commit -qm inside && "
      "git config core.fsmonitor \"touch $M\" && "
      "printf '#!/bin/sh\\ntouch $M\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo made");
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("made")) << r.out;
  EXPECT_NE(std::string::npos, r.err.find("fsmonitor")) << r.err;  // the user is told what was removed
  EXPECT_TRUE(w.host_git_runs_nothing());
  // The neighbour: the repository made inside still works on the host, with its commit.
  EXPECT_EQ(0, w.host_git("log --oneline -1 --grep inside"));
}

TEST(Git, CommitModeCommitsButKeepsWhatGitObeysReadOnly) {
  GitWorkspace w;
  const std::string commit_mode = "filesystem:\n  git: commit\n";
  SandboxRun r = w.run(
      "echo two >> file.txt && git commit -qam inside && echo commit=ok || echo commit=refused; "
      "printf '[core]\\n\\tfsmonitor = touch $M\\n' >> .git/config && echo config=ok || echo config=refused; "
      "printf '#!/bin/sh\\ntouch $M\\n' > .git/hooks/pre-commit && echo hook=ok || echo hook=refused; "
      "mkdir -p planted/hooks && printf '[core]\\n\\tfsmonitor = touch $M\\n' > planted/config && "
      "echo \"$PWD/planted\" > .git/commondir && echo commondir=ok || echo commondir=refused; "
      // Where .git has no worktrees/ or modules/ yet, git: commit cannot bind them: made inside, neutralised.
      "mkdir -p .git/worktrees/w && echo \"$PWD/planted\" > .git/worktrees/w/commondir && echo worktree=ok; "
      "git init -q --bare .git/modules/m && printf '[core]\\n\\tfsmonitor = touch $M\\n' >> .git/modules/m/config && "
      "echo module=ok",
      commit_mode);
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("commit=ok")) << r.out;    // allowed: the object store is writable
  EXPECT_NE(std::string::npos, r.out.find("config=refused")) << r.out;  // EROFS: config is read-only
  EXPECT_NE(std::string::npos, r.out.find("hook=refused")) << r.out;    // EROFS: hooks are read-only
  EXPECT_NE(std::string::npos, r.out.find("commondir=ok")) << r.out;    // a new name cannot be made read-only...
  EXPECT_NE(std::string::npos, r.err.find("commondir")) << r.err;   // ...so it is moved away at the end, and said
  EXPECT_NE(std::string::npos, r.out.find("worktree=ok")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("module=ok")) << r.out;
  EXPECT_NE(std::string::npos, r.err.find("worktrees/w/commondir")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("modules/m/config")) << r.err;
  EXPECT_TRUE(w.host_git_runs_nothing());
  EXPECT_EQ(0, w.host_git("log --oneline -1 --grep inside"));
}

}  // namespace
}  // namespace oishell::test
