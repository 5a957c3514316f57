// The repository guard (runtime/outside/repo_guard.h): git metadata written during the run is neutralised before the
// user's git on the host reads it. Each route is played three times with the real git:
//   - without the guard: the payload fires (MARKER is created), which shows the route is real;
//   - with the guard: MARKER stays absent, the finding names the path, and git still works where it should;
//   - with the same planting done before the start: it is the user's, so nothing is reported or changed (and it
//     fires, as it would have anyway).
// Routes that move old files into a repository's place need the snapshot of the git directories there at the start
// (RepoGuard::snapshot_async): they are also played with the guard but no snapshot, where the payload still fires.
// Nothing here needs root; tests that depend on the file mode bits say what differs when run as root.
#include "runtime/outside/repo_guard.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace oishell::test {
namespace {

namespace fs = std::filesystem;

// Git without the machine's or the user's config, and no repository found above the test's directory.
const char kGitEnv[] =
    "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=Test GIT_AUTHOR_EMAIL=t@example.com "
    "GIT_COMMITTER_NAME=Test GIT_COMMITTER_EMAIL=t@example.com GIT_CEILING_DIRECTORIES=\"$SCENE\"; "
    "unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_COMMON_DIR GIT_CONFIG GIT_CONFIG_PARAMETERS "
    "GIT_CONFIG_COUNT; ";

// Shell snippets for the routes. $MARKER is the file the payloads create, outside the workspace.
const std::string kFsmonitor = "printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' \"$MARKER\"";
std::string hook(const std::string& path) {
  return "printf '#!/bin/sh\\ntouch \"%s\"\\n' \"$MARKER\" > " + path + " && chmod +x " + path;
}
std::string repo(const std::string& dir) {
  return "git init -q -b main " + dir + " && echo a > " + dir + "/f && git -C " + dir + " add f && git -C " + dir +
         " commit -qm i";
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Shell {
  int status = -1;
  std::string out;  // stdout and stderr
};

Shell sh(const std::string& script, const std::string& scene, const std::string& cwd) {
  std::string full = "export SCENE=" + shell_quote(scene) + " MARKER=" + shell_quote(scene + "/MARKER") + "; " +
                     kGitEnv + "cd " + shell_quote(cwd) + " && { " + script + "\n} 2>&1";
  Shell r;
  FILE* p = ::popen(full.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = ::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool have_git() {
  static const bool ok = ::system("git --version >/dev/null 2>&1") == 0;
  return ok;
}

#define REQUIRE_GIT() \
  if (!have_git()) GTEST_SKIP() << "git is not installed: the routes through git cannot be played"

// "" when it cannot be read. With open/read, not a stream: a thread listed in /proc/self/task may end before its
// `comm` is read, and libstdc++'s filebuf throws on that read's ESRCH.
std::string read_file(const std::string& path) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::string text_of(const std::vector<RepoFinding>& findings) {
  std::string out;
  for (const auto& f : findings) out += "  " + f.path + ": " + f.found + " -> " + f.action + "\n";
  return out.empty() ? "  (no findings)\n" : out;
}

// A fresh workspace `ws` inside a scene directory that also holds MARKER and anything "outside the workspace".
class Scene {
 public:
  Scene() : ws_(dir_.path() + "/ws") { fs::create_directory(ws_); }
  ~Scene() { (void)::system(("chmod -R u+rwx " + shell_quote(dir_.path()) + " 2>/dev/null").c_str()); }
  const std::string& ws() const { return ws_; }
  std::string scene() const { return dir_.path(); }
  std::string marker() const { return dir_.path() + "/MARKER"; }
  bool fired() const { return fs::exists(marker()); }
  Shell run(const std::string& script, const std::string& cwd = "") const {
    return sh(script, dir_.path(), cwd.empty() ? ws_ : cwd);
  }
  // Waits past a coarse clock tick, so that what was written so far is older than the start.
  static struct timespec start() {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    return RepoGuard::start_time();
  }

 private:
  TempDir dir_;
  std::string ws_;
};

struct Route {
  std::string before;                 // shell in the workspace before the start: the user's own state
  std::string plant;                  // shell in the workspace during the run: what a sandboxed process does
  std::string host;                   // shell in the workspace afterwards: what the user runs on the host
  std::vector<std::string> expected;  // workspace-relative paths the guard must name
};

enum class Mode { kNoGuard, kGuard, kPlantedBefore };

// When the guard's snapshot is taken: never (the guard judges each entry by its own ctime), once the start is read
// and before the planting (what a planting right after the sandbox starts meets when the walk has gone past), or
// after it (what a planting meets when made before the walk reaches the place).
enum class Snap { kNone, kBeforePlant, kAfterPlant };

bool snapshot_thread_running() {
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::string comm = read_file(task.path() / "comm");
    if (comm == std::string(RepoGuard::kSnapshotThreadName) + "\n") return true;
  }
  return false;
}

// Starts the guard's snapshot and waits for its walk to end (its thread, named before snapshot_async() returns, is
// gone), so that what the test does next happens after the walk has passed.
void snapshot_and_wait(RepoGuard& guard) {
  guard.snapshot_async();
  for (int i = 0; i < 10000 && snapshot_thread_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_FALSE(snapshot_thread_running()) << "the snapshot's walk did not end within 10 s";
}

struct Outcome {
  std::unique_ptr<Scene> scene = std::make_unique<Scene>();
  std::vector<RepoFinding> findings;
  std::optional<std::vector<RepoFinding>> again;  // a second check, right after the first
  Shell host;
  bool fired = false;
  const RepoFinding* finding(const std::string& rel) const {
    for (const auto& f : findings) {
      if (f.path == scene->ws() + "/" + rel) return &f;
    }
    return nullptr;
  }
  std::string report() const { return "findings:\n" + text_of(findings) + "host output:\n" + host.out; }
};

Outcome play(const Route& route, Mode mode, Snap snap = Snap::kNone) {
  Outcome o;
  std::string before = route.before.empty() ? "true" : route.before;
  if (mode == Mode::kPlantedBefore) before += " && " + route.plant;
  Shell b = o.scene->run(before);
  EXPECT_EQ(0, b.status) << before << "\n" << b.out;
  struct timespec start = Scene::start();
  RepoGuard guard({o.scene->ws()}, start);
  bool guarded = mode != Mode::kNoGuard;
  if (guarded && snap == Snap::kBeforePlant) snapshot_and_wait(guard);
  if (mode != Mode::kPlantedBefore) {
    Shell p = o.scene->run(route.plant);
    EXPECT_EQ(0, p.status) << route.plant << "\n" << p.out;
  }
  if (guarded && snap == Snap::kAfterPlant) guard.snapshot_async();
  if (guarded) {
    o.findings = guard.check();
    if (snap != Snap::kNone) o.again = guard.check();
  }
  o.host = o.scene->run(route.host);
  o.fired = o.scene->fired();
  return o;
}

// Plays the route three ways (see the top of the file) and returns the guarded outcome for further checks.
Outcome expect_neutralised(const Route& route) {
  Outcome without = play(route, Mode::kNoGuard);
  EXPECT_TRUE(without.fired) << "the payload does not fire without the guard, so this proves nothing\n"
                             << without.report();
  Outcome before = play(route, Mode::kPlantedBefore);
  EXPECT_TRUE(before.findings.empty()) << "planted before the start: the user's, not to be reported\n"
                                       << before.report();
  EXPECT_TRUE(before.fired) << "planted before the start: the user's, left as it was\n" << before.report();
  Outcome with = play(route, Mode::kGuard);
  EXPECT_FALSE(with.fired) << with.report();
  for (const auto& rel : route.expected) EXPECT_TRUE(with.finding(rel)) << rel << " is not named\n" << with.report();
  return with;
}

// Plays a route that moves old files into a repository's place four ways: without the guard and with the guard but
// no snapshot, the payload fires (the snapshot is what stops it); planted before the start, it is the user's and
// left alone; with the snapshot taken at `snap`, it is neutralised, and a second check finds nothing more.
Outcome expect_neutralised_with_snapshot(const Route& route, Snap snap) {
  Outcome without = play(route, Mode::kNoGuard);
  EXPECT_TRUE(without.fired) << "the payload does not fire without the guard, so this proves nothing\n"
                             << without.report();
  Outcome no_snapshot = play(route, Mode::kGuard, Snap::kNone);
  EXPECT_TRUE(no_snapshot.fired) << "without a snapshot the guard judges each file by its own ctime, and these "
                                    "are older than the start\n"
                                 << no_snapshot.report();
  Outcome before = play(route, Mode::kPlantedBefore, snap);
  EXPECT_TRUE(before.findings.empty()) << "planted before the start: the user's, not to be reported\n"
                                       << before.report();
  EXPECT_TRUE(before.fired) << "planted before the start: the user's, left as it was\n" << before.report();
  Outcome with = play(route, Mode::kGuard, snap);
  EXPECT_FALSE(with.fired) << with.report();
  for (const auto& rel : route.expected) EXPECT_TRUE(with.finding(rel)) << rel << " is not named\n" << with.report();
  EXPECT_TRUE(with.again && with.again->empty()) << "checked again:\n" << (with.again ? text_of(*with.again) : "");
  return with;
}

// --- Routes ---------------------------------------------------------------------------------------------------

TEST(RepoGuard, FsmonitorAddedToANestedRepositorysConfig) {
  REQUIRE_GIT();
  // Without the guard, `git -C sub status` runs core.fsmonitor and MARKER is created.
  Route r{repo("sub") + " && cp sub/.git/config ../original-config",
          kFsmonitor + " >> sub/.git/config",
          "git -C sub status >/dev/null; echo b >> sub/f; git -C sub commit -qam x; git -C sub log --format=%s",
          {"sub/.git/config"}};
  Outcome o = expect_neutralised(r);
  const RepoFinding* f = o.finding("sub/.git/config");
  ASSERT_TRUE(f);
  EXPECT_EQ("written during the run; sets core.fsmonitor", f->found);
  EXPECT_EQ("rewritten without core.fsmonitor; the original is kept in config.oishell-quarantine", f->action);
  // What git init wrote is kept, byte for byte, and the repository works.
  EXPECT_EQ(read_file(o.scene->scene() + "/original-config"), read_file(o.scene->ws() + "/sub/.git/config"));
  EXPECT_NE(std::string::npos, read_file(o.scene->ws() + "/sub/.git/config.oishell-quarantine").find("fsmonitor"));
  EXPECT_EQ("x\ni\n", o.host.out);
}

TEST(RepoGuard, HookPlantedInANestedRepository) {
  REQUIRE_GIT();
  // Without the guard, `git -C sub commit` runs .git/hooks/pre-commit and MARKER is created.
  Route r{repo("sub"),
          hook("sub/.git/hooks/pre-commit"),
          "echo b >> sub/f; git -C sub commit -qam x; git -C sub log --format=%s",
          {"sub/.git/hooks/pre-commit"}};
  Outcome o = expect_neutralised(r);
  const RepoFinding* f = o.finding("sub/.git/hooks/pre-commit");
  ASSERT_TRUE(f);
  EXPECT_EQ("moved to pre-commit.oishell-quarantine; git runs a hook only by its exact name", f->action);
  EXPECT_TRUE(fs::exists(o.scene->ws() + "/sub/.git/hooks/pre-commit.oishell-quarantine"));
  EXPECT_EQ("x\ni\n", o.host.out);                 // the commit went through without the hook
  EXPECT_EQ(1u, o.findings.size()) << o.report();  // the samples git init wrote are not named
}

TEST(RepoGuard, GitInitInASubdirectoryWithAPayload) {
  REQUIRE_GIT();
  // Without the guard, `git -C sub status` runs core.fsmonitor (and the commit, the hook): MARKER is created.
  Route r{"mkdir sub && echo a > sub/f",
          "git init -q -b main sub && git -C sub add f && git -C sub commit -qm i && " + kFsmonitor +
              " >> sub/.git/config && " + hook("sub/.git/hooks/pre-commit"),
          "git -C sub status >/dev/null; echo b >> sub/f; git -C sub commit -qam x; git -C sub log --format=%s",
          {"sub/.git/config", "sub/.git/hooks/pre-commit"}};
  Outcome o = expect_neutralised(r);
  EXPECT_EQ(2u, o.findings.size()) << o.report();
  EXPECT_EQ("x\ni\n", o.host.out);  // a working repository is left
}

TEST(RepoGuard, NewDotGitAtTheTopOfAWorkspaceThatHadNone) {
  REQUIRE_GIT();
  // Without the guard, the user's next `git status` in the workspace runs core.fsmonitor: MARKER is created.
  Route r{"echo a > f",
          "git init -q -b main . && git add f && git commit -qm i && " + kFsmonitor + " >> .git/config && " +
              hook(".git/hooks/pre-commit"),
          "git status >/dev/null; echo b >> f; git commit -qam x; git log --format=%s",
          {".git/config", ".git/hooks/pre-commit"}};
  Outcome o = expect_neutralised(r);
  EXPECT_EQ("x\ni\n", o.host.out);
}

TEST(RepoGuard, CommondirToAPlantedDirectory) {
  REQUIRE_GIT();
  // Without the guard, git takes sub's config and hooks from evil/: `git -C sub status` runs its fsmonitor.
  Route r{repo("sub"),
          "cp -r sub/.git evil && " + kFsmonitor + " >> evil/config && " + hook("evil/hooks/pre-commit") +
              " && echo ../../evil > sub/.git/commondir",
          "git -C sub status; echo b >> sub/f; git -C sub commit -qam x",
          {"sub/.git/commondir", "evil/config", "evil/hooks/pre-commit"}};
  Outcome o = expect_neutralised(r);
  const RepoFinding* f = o.finding("sub/.git/commondir");
  ASSERT_TRUE(f);
  EXPECT_EQ("moved to commondir.oishell-quarantine", f->action);
}

TEST(RepoGuard, CommondirAloneIsEnough) {
  REQUIRE_GIT();
  // evil/ is old (made before the start); only the redirection is new. Without the guard, `git -C sub status`
  // reads evil/config and runs its fsmonitor: MARKER is created.
  Route r{repo("sub") + " && cp -r sub/.git evil && " + kFsmonitor + " >> evil/config",
          "echo ../../evil > sub/.git/commondir",
          "git -C sub status",
          {"sub/.git/commondir"}};
  Outcome o = expect_neutralised(r);
  EXPECT_EQ(1u, o.findings.size()) << o.report();
  EXPECT_EQ(0, o.host.status) << o.report();  // sub is its own repository again
}

TEST(RepoGuard, GitFilePointingAtAPlantedGitDir) {
  REQUIRE_GIT();
  // Without the guard, `git -C sub status` follows sub/.git (gitdir: ../planted) and runs planted's fsmonitor.
  Route r{"mkdir sub && echo a > sub/f",
          "git init -q -b main p && mv p/.git planted && rmdir p && " + kFsmonitor +
              " >> planted/config && echo 'gitdir: ../planted' > sub/.git",
          "git -C sub status",
          {"sub/.git", "planted/config"}};
  Outcome o = expect_neutralised(r);
  const RepoFinding* f = o.finding("sub/.git");
  ASSERT_TRUE(f);
  EXPECT_EQ(".git (gitdir: ../planted) written during the run: git would take the repository from where it points",
            f->found);
  EXPECT_EQ("moved to .git.oishell-quarantine; git no longer finds a repository through it", f->action);
}

TEST(RepoGuard, GitFileAloneIsEnough) {
  REQUIRE_GIT();
  // planted/ is old; only the pointer is new. Without the guard, git follows it and runs planted's fsmonitor.
  Route r{"mkdir sub && git init -q -b main p && mv p/.git planted && rmdir p && " + kFsmonitor + " >> planted/config",
          "echo 'gitdir: ../planted' > sub/.git",
          "git -C sub status",
          {"sub/.git"}};
  Outcome o = expect_neutralised(r);
  EXPECT_EQ(1u, o.findings.size()) << o.report();
}

TEST(RepoGuard, DotGitSymlinkToAnOldGitDir) {
  REQUIRE_GIT();
  // Without the guard, `git -C sub status` follows the symlink sub/.git and runs planted's fsmonitor.
  Route r{"mkdir sub && git init -q -b main p && mv p/.git planted && rmdir p && " + kFsmonitor + " >> planted/config",
          "ln -s ../planted sub/.git",
          "git -C sub status",
          {"sub/.git"}};
  Outcome o = expect_neutralised(r);
  const RepoFinding* f = o.finding("sub/.git");
  ASSERT_TRUE(f);
  EXPECT_EQ(
      ".git as a symlink to ../planted placed during the run: git would take the repository from where it "
      "points",
      f->found);
}

TEST(RepoGuard, WorktreeCommondirRedirected) {
  REQUIRE_GIT();
  // Without the guard, the linked worktree wt takes its config from evil/: `git -C wt status` runs its fsmonitor.
  Route r{repo("main") + " && git -C main worktree add -q ../wt && cp -r main/.git evil && rm -rf evil/worktrees && " +
              kFsmonitor + " >> evil/config",
          "echo \"$PWD/evil\" > main/.git/worktrees/wt/commondir",
          "git -C wt status",
          {"main/.git/worktrees/wt/commondir"}};
  Outcome o = expect_neutralised(r);
  EXPECT_EQ(1u, o.findings.size()) << o.report();
}

TEST(RepoGuard, SubmoduleGitDirConfigRewritten) {
  REQUIRE_GIT();
  // Without the guard, `git status` in the superproject recurses into the submodule m, whose .git file points at
  // .git/modules/m: its fsmonitor runs and MARKER is created.
  Route r{
      "git init -q -b main \"$SCENE/lib\" && git -C \"$SCENE/lib\" commit -q --allow-empty -m i && "
      "git init -q -b main . && git -c protocol.file.allow=always submodule add -q \"$SCENE/lib\" m && "
      "git commit -qm sub",
      kFsmonitor + " >> .git/modules/m/config",
      "git status >/dev/null; git -C m status >/dev/null && echo submodule-works",
      {".git/modules/m/config"}};
  Outcome o = expect_neutralised(r);
  const RepoFinding* f = o.finding(".git/modules/m/config");
  ASSERT_TRUE(f);
  // core.worktree, which `git submodule add` wrote, is not allowed either; the submodule works without it.
  EXPECT_EQ("written during the run; sets core.worktree, core.fsmonitor", f->found);
  EXPECT_EQ("submodule-works\n", o.host.out);
}

TEST(RepoGuard, BareRepositoryShapedDirectory) {
  REQUIRE_GIT();
  // Without the guard, git takes planted/ for a repository (HEAD, objects, refs) whose config names a work tree
  // and an fsmonitor: `git status` inside it creates MARKER.
  Route r{"",
          "mkdir -p planted/objects planted/refs && echo 'ref: refs/heads/main' > planted/HEAD && "
          "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = %s\\n' \"$PWD\" "
          "> planted/config && " +
              kFsmonitor + " >> planted/config",
          "cd planted && git status",
          {"planted/config"}};
  Outcome o = expect_neutralised(r);
  const RepoFinding* f = o.finding("planted/config");
  ASSERT_TRUE(f);
  EXPECT_EQ("written during the run; sets core.worktree, core.fsmonitor", f->found);
}

TEST(RepoGuard, ConfigReplacedByASymlink) {
  REQUIRE_GIT();
  // Without the guard, git reads sub/.git/config through the symlink (evil.cfg, old, not named config): `git -C sub
  // status` runs its fsmonitor.
  Route r{repo("sub") + " && { cat sub/.git/config && " + kFsmonitor + "; } > evil.cfg",
          "rm sub/.git/config && ln -s ../../evil.cfg sub/.git/config",
          "git -C sub status >/dev/null",
          {"sub/.git/config"}};
  Outcome o = expect_neutralised(r);
  const RepoFinding* f = o.finding("sub/.git/config");
  ASSERT_TRUE(f);
  EXPECT_EQ("config as a symlink to ../../evil.cfg placed during the run", f->found);
  EXPECT_EQ("moved to config.oishell-quarantine; the repository works without it", f->action);
  EXPECT_EQ(0, o.host.status) << o.report();
}

TEST(RepoGuard, ConfigWorktreeWhereTheRepositoryReadsIt) {
  REQUIRE_GIT();
  // The user's repository reads config.worktree (extensions.worktreeConfig, set before the start). Without the
  // guard, a config.worktree written during the run makes `git -C sub status` run its fsmonitor.
  Route r{repo("sub") + " && git -C sub config core.repositoryformatversion 1 && " +
              "git -C sub config extensions.worktreeConfig true",
          kFsmonitor + " > sub/.git/config.worktree",
          "git -C sub status >/dev/null",
          {"sub/.git/config.worktree"}};
  Outcome o = expect_neutralised(r);
  EXPECT_EQ(0, o.host.status) << o.report();
}

TEST(RepoGuard, HooksDirectoryReplacedByASymlink) {
  REQUIRE_GIT();
  // Without the guard, git runs hooks from evilhooks/ through the symlink: the commit creates MARKER.
  Route r{repo("sub"),
          "mkdir evilhooks && " + hook("evilhooks/pre-commit") +
              " && rm -r sub/.git/hooks && ln -s ../../evilhooks sub/.git/hooks",
          "echo b >> sub/f; git -C sub commit -qam x",
          {"sub/.git/hooks"}};
  expect_neutralised(r);
}

TEST(RepoGuard, UnreadableDirectoryIsCheckedOrNamed) {
  REQUIRE_GIT();
  // Without the guard, once the user makes locked/ readable, `git -C locked/r status` runs the fsmonitor. The guard
  // (not root) adds the owner's permissions to check inside, then restores mode 000; as root nothing is unreadable.
  Route r{"",
          "mkdir locked && " + repo("locked/r") + " && " + kFsmonitor + " >> locked/r/.git/config && chmod 000 locked",
          "stat -c mode=%a locked; chmod 755 locked && git -C locked/r status >/dev/null",
          {"locked/r/.git/config"}};
  Outcome o = expect_neutralised(r);
  EXPECT_EQ(0u, o.host.out.rfind("mode=0\n", 0)) << o.report();  // the mode was put back
  if (::geteuid() != 0) {
    const RepoFinding* f = o.finding("locked");
    ASSERT_TRUE(f) << o.report();
    EXPECT_EQ("could not be read (mode 0000); changed during the run", f->found);
    EXPECT_EQ("checked with its owner's permissions added for the check; mode 0000 restored", f->action);
  }
}

TEST(RepoGuard, ReadOnlyGitDirectoryIsStillNeutralised) {
  REQUIRE_GIT();
  // A .git made read-only (0555) after the planting: renaming inside it fails until the owner may write. Without
  // the guard, `git -C sub status` runs the fsmonitor.
  Route r{repo("sub"),
          kFsmonitor + " >> sub/.git/config && chmod 555 sub/.git",
          "stat -c mode=%a sub/.git; git -C sub status >/dev/null; chmod 755 sub/.git",
          {"sub/.git/config"}};
  Outcome o = expect_neutralised(r);
  EXPECT_EQ(0u, o.host.out.rfind("mode=555\n", 0)) << o.report();
  const RepoFinding* f = o.finding("sub/.git/config");
  ASSERT_TRUE(f);
  EXPECT_EQ("rewritten without core.fsmonitor; the original is kept in config.oishell-quarantine", f->action);
}

// --- Old files moved into a repository's place (the snapshot) -------------------------------------------------

// A repository's metadata kept outside the repository before the start (stash/: as an earlier run could leave it),
// with an fsmonitor in its config and a pre-commit hook, all older than the start.
const std::string kStash = repo("sub") + " && mv sub/.git stash && " + kFsmonitor + " >> stash/config && " +
                           hook("stash/hooks/pre-commit");
const std::string kStatusAndCommit =
    "git -C sub status >/dev/null; echo b >> sub/f; git -C sub commit -qam x; git -C sub log --format=%s";

TEST(RepoGuard, OldDirectoryRenamedToDotGitAfterTheSnapshot) {
  REQUIRE_GIT();
  // Renamed to sub/.git once the snapshot's walk has passed: recorded (as stash/) at another path. Without the
  // snapshot, config and hooks/pre-commit keep their old ctimes and are left: `git -C sub status` runs the
  // fsmonitor and the commit runs the hook, creating MARKER.
  Route r{kStash, "mv stash sub/.git", kStatusAndCommit, {"sub/.git/config", "sub/.git/hooks/pre-commit"}};
  Outcome o = expect_neutralised_with_snapshot(r, Snap::kBeforePlant);
  EXPECT_EQ(2u, o.findings.size()) << o.report();  // the samples git init wrote are not named
  const RepoFinding* config = o.finding("sub/.git/config");
  ASSERT_TRUE(config);
  EXPECT_EQ("in a git directory new since the start; sets core.fsmonitor", config->found);
  EXPECT_EQ("rewritten without core.fsmonitor; the original is kept in config.oishell-quarantine", config->action);
  const RepoFinding* pre_commit = o.finding("sub/.git/hooks/pre-commit");
  ASSERT_TRUE(pre_commit);
  EXPECT_EQ("a hook (#!/bin/sh) in a git directory new since the start: git would run it", pre_commit->found);
  EXPECT_EQ("moved to pre-commit.oishell-quarantine; git runs a hook only by its exact name", pre_commit->action);
  EXPECT_EQ("x\ni\n", o.host.out);  // the repository works: status, and a commit without the hook
}

TEST(RepoGuard, OldDirectoryRenamedToDotGitBeforeTheSnapshotReachesIt) {
  REQUIRE_GIT();
  // The same move made before the snapshot's walk gets there: the rename set stash's ctime, so the walk finds an
  // old-looking repository at sub/.git whose own ctime is after the start, and does not record it. Without the
  // snapshot, `git -C sub status` runs the fsmonitor and the commit the hook: MARKER is created.
  Route r{kStash, "mv stash sub/.git", kStatusAndCommit, {"sub/.git/config", "sub/.git/hooks/pre-commit"}};
  Outcome o = expect_neutralised_with_snapshot(r, Snap::kAfterPlant);
  EXPECT_EQ(2u, o.findings.size()) << o.report();
  EXPECT_EQ("x\ni\n", o.host.out);
}

TEST(RepoGuard, OldDirectoryRenamedOverTheUsersDotGit) {
  REQUIRE_GIT();
  // The user's repository sub (recorded by the snapshot) has its .git replaced, at the same path, by an old copy
  // holding an fsmonitor, a pre-commit hook and worktrees/ entries: another inode than the one recorded. Without the
  // snapshot, every file in it is older than the start and is left: `git -C sub status` runs the fsmonitor and the
  // commit the hook, creating MARKER.
  Route r{repo("sub") + " && cp -a sub/.git stash && " + kFsmonitor + " >> stash/config && " +
              hook("stash/hooks/pre-commit") + " && mkdir -p stash/worktrees/wt && echo /elsewhere/.git > " +
              "stash/worktrees/wt/gitdir && echo x > stash/worktrees/note",
          "rm -rf sub/.git && mv stash sub/.git",
          kStatusAndCommit,
          {"sub/.git/config", "sub/.git/hooks/pre-commit", "sub/.git/worktrees/wt/gitdir", "sub/.git/worktrees/note"}};
  Outcome o = expect_neutralised_with_snapshot(r, Snap::kBeforePlant);
  EXPECT_EQ(4u, o.findings.size()) << o.report();
  const RepoFinding* f = o.finding("sub/.git/worktrees/wt/gitdir");
  ASSERT_TRUE(f);
  EXPECT_EQ("gitdir (/elsewhere/.git) in a git directory new since the start: git would take it for the linked "
            "worktree's location",
            f->found);
  EXPECT_EQ("x\ni\n", o.host.out);
}

TEST(RepoGuard, OldDirectoryMadeAGitDirectoryDuringTheRun) {
  REQUIRE_GIT();
  // Before the start, planted/ is an ordinary directory holding a git config that names the workspace as its work
  // tree and an fsmonitor (never in a git directory, so never checked). The run adds HEAD, objects and refs: git
  // now takes planted/ for a repository. Without the snapshot the config keeps its old ctime and is left, and `git
  // status` inside runs the fsmonitor: MARKER is created.
  Route r{"mkdir planted && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = %s\\n' "
          "\"$PWD\" > planted/config && " +
              kFsmonitor + " >> planted/config",
          "mkdir planted/objects planted/refs && echo 'ref: refs/heads/main' > planted/HEAD",
          "cd planted && git status",
          {"planted/config"}};
  Outcome o = expect_neutralised_with_snapshot(r, Snap::kBeforePlant);
  EXPECT_EQ(1u, o.findings.size()) << o.report();
  const RepoFinding* f = o.finding("planted/config");
  ASSERT_TRUE(f);
  EXPECT_EQ("in a git directory new since the start; sets core.worktree, core.fsmonitor", f->found);
}

TEST(RepoGuard, OldHooksDirectoryRenamedIntoTheUsersRepository) {
  REQUIRE_GIT();
  // The user's repository sub (trusted: recorded by the snapshot) gets an old directory holding a pre-commit hook
  // renamed in as its hooks/. Without the snapshot the hook keeps its old ctime and is left: the commit runs it and
  // creates MARKER.
  Route r{repo("sub") + " && mkdir stash && " + hook("stash/pre-commit"),
          "rm -r sub/.git/hooks && mv stash sub/.git/hooks",
          "echo b >> sub/f; git -C sub commit -qam x; git -C sub log --format=%s",
          {"sub/.git/hooks/pre-commit"}};
  Outcome o = expect_neutralised_with_snapshot(r, Snap::kBeforePlant);
  EXPECT_EQ(1u, o.findings.size()) << o.report();
  const RepoFinding* f = o.finding("sub/.git/hooks/pre-commit");
  ASSERT_TRUE(f);
  EXPECT_EQ("a hook (#!/bin/sh) in a hooks directory new since the start: git would run it", f->found);
  EXPECT_EQ("x\ni\n", o.host.out);
}

// --- Neighbours that must be left alone ------------------------------------------------------------------------

TEST(RepoGuard, RepositoryMadeNormallyDuringTheRunIsLeftExactlyAsItWas) {
  REQUIRE_GIT();
  Scene s;
  ASSERT_EQ(0, s.run("mkdir proj && echo a > proj/f").status);
  struct timespec start = Scene::start();
  Shell made = s.run(
      "git init -q -b main proj && cd proj && git remote add origin https://example.com/p.git && "
      "git config user.name 'A U Thor' && git config user.email a@example.com && git add f && git commit -qm i && "
      "git config branch.main.remote origin && "
      "git config branch.main.merge refs/heads/main");
  ASSERT_EQ(0, made.status) << made.out;
  std::string config = read_file(s.ws() + "/proj/.git/config");
  Shell hooks_before = s.run("ls -la proj/.git/hooks");
  std::vector<RepoFinding> findings = RepoGuard({s.ws()}, start).check();
  EXPECT_TRUE(findings.empty()) << text_of(findings);
  EXPECT_EQ(config, read_file(s.ws() + "/proj/.git/config"));  // byte-identical
  EXPECT_EQ(hooks_before.out, s.run("ls -la proj/.git/hooks").out);
  Shell after = s.run("git -C proj status --short && git -C proj log --format=%s && git -C proj remote -v");
  EXPECT_EQ(0, after.status);
  EXPECT_EQ("i\norigin\thttps://example.com/p.git (fetch)\norigin\thttps://example.com/p.git (push)\n", after.out);
}

TEST(RepoGuard, TheUsersOwnConfigIsNeverTouchedEvenWhenGitRanInTheRepository) {
  REQUIRE_GIT();
  Scene s;
  // The user's nested repository, with keys the allowlist would drop; the run commits in it (its .git, index, refs
  // and logs change) but does not write the config or the hooks.
  ASSERT_EQ(0, s.run(repo("sub") + " && git -C sub config alias.st status && git -C sub config core.editor vi && " +
                     hook("sub/.git/hooks/post-commit"))
                   .status);
  std::string config = read_file(s.ws() + "/sub/.git/config");
  struct timespec start = Scene::start();
  ASSERT_EQ(0, s.run("echo b >> sub/f && git -C sub commit -qam agent && rm -f \"$MARKER\"").status);
  std::vector<RepoFinding> findings = RepoGuard({s.ws()}, start).check();
  EXPECT_TRUE(findings.empty()) << text_of(findings);
  EXPECT_EQ(config, read_file(s.ws() + "/sub/.git/config"));
  EXPECT_TRUE(fs::exists(s.ws() + "/sub/.git/hooks/post-commit"));
}

TEST(RepoGuard, WithASnapshotGitUsedInTheUsersRepositoryAndNewRepositoriesLeaveNoFinding) {
  REQUIRE_GIT();
  Scene s;
  // The user's nested repository, with keys the allowlist would drop (a credential helper, an alias, an editor) and
  // a hook; a repository outside the workspace to clone.
  ASSERT_EQ(0, s.run(repo("sub") + " && git -C sub config credential.helper store && git -C sub config alias.st " +
                     "status && git -C sub config core.editor vi && " + hook("sub/.git/hooks/post-commit") + " && " +
                     repo("\"$SCENE/lib\""))
                   .status);
  std::string config = read_file(s.ws() + "/sub/.git/config");
  struct timespec start = Scene::start();
  RepoGuard guard({s.ws()}, start);
  snapshot_and_wait(guard);
  // The run uses git in sub (its .git, index, refs and logs change; its config and hooks do not), makes a
  // repository and clones one. Were sub not trusted, its config would be rewritten without the three keys.
  Shell run = s.run(
      "git -C sub status >/dev/null && echo b >> sub/f && git -C sub commit -qam agent && rm -f \"$MARKER\" && "
      "mkdir made && echo a > made/f && git init -q -b main made && git -C made add f && git -C made commit -qm i && "
      "git clone -q \"$SCENE/lib\" cloned");
  ASSERT_EQ(0, run.status) << run.out;
  std::string made = read_file(s.ws() + "/made/.git/config");
  std::string cloned = read_file(s.ws() + "/cloned/.git/config");
  std::vector<RepoFinding> findings = guard.check();
  EXPECT_TRUE(findings.empty()) << text_of(findings);
  EXPECT_EQ(config, read_file(s.ws() + "/sub/.git/config"));  // byte-identical, credential.helper included
  EXPECT_TRUE(fs::exists(s.ws() + "/sub/.git/hooks/post-commit"));
  EXPECT_EQ(made, read_file(s.ws() + "/made/.git/config"));
  EXPECT_EQ(cloned, read_file(s.ws() + "/cloned/.git/config"));
  Shell after = s.run("git -C sub log --format=%s && git -C cloned log --format=%s && git -C cloned remote");
  EXPECT_EQ(0, after.status);
  EXPECT_EQ("agent\ni\ni\norigin\n", after.out);
}

TEST(RepoGuard, WithoutASnapshotEachFileIsJudgedByItsOwnCtime) {
  REQUIRE_GIT();
  Scene s;
  // An old directory renamed to sub/.git during the run, its files older than the start: without snapshot_async()
  // the guard sees nothing new in it and leaves it (what the snapshot tests above neutralise).
  ASSERT_EQ(0, s.run(kStash).status);
  std::string config = read_file(s.ws() + "/stash/config");
  struct timespec start = Scene::start();
  RepoGuard guard({s.ws()}, start);
  ASSERT_EQ(0, s.run("mv stash sub/.git").status);
  std::vector<RepoFinding> findings = guard.check();
  EXPECT_TRUE(findings.empty()) << text_of(findings);
  EXPECT_EQ(config, read_file(s.ws() + "/sub/.git/config"));
  EXPECT_TRUE(fs::exists(s.ws() + "/sub/.git/hooks/pre-commit"));
}

TEST(RepoGuard, ConfigFilesOutsideGitDirectoriesAreNotTouched) {
  Scene s;
  fs::create_directories(s.ws() + "/app/objects");
  fs::create_directories(s.ws() + "/app/refs");
  fs::create_directories(s.ws() + "/site/.github");
  struct timespec start = Scene::start();
  // A project's own files named like git's: no HEAD (git would not take app/ for a repository), no .git.
  std::ofstream(s.ws() + "/app/config") << "{\"port\": 8080}\n";
  std::ofstream(s.ws() + "/app/head") << "<head></head>\n";
  std::ofstream(s.ws() + "/site/config") << "[core]\n\tfsmonitor = x\n";
  fs::create_directories(s.ws() + "/site/hooks");
  std::ofstream(s.ws() + "/site/hooks/pre-commit") << "#!/bin/sh\n";
  std::vector<RepoFinding> findings = RepoGuard({s.ws()}, start).check();
  EXPECT_TRUE(findings.empty()) << text_of(findings);
  EXPECT_EQ("{\"port\": 8080}\n", read_file(s.ws() + "/app/config"));
  EXPECT_TRUE(fs::exists(s.ws() + "/site/hooks/pre-commit"));
}

TEST(RepoGuard, SkippedPathsAreNeitherWalkedNorChanged) {
  REQUIRE_GIT();
  Scene s;
  ASSERT_EQ(0, s.run(repo("sub") + " && " + repo("other")).status);
  struct timespec start = Scene::start();
  ASSERT_EQ(0, s.run(kFsmonitor + " >> sub/.git/config && " + kFsmonitor + " >> other/.git/config").status);
  std::string config = read_file(s.ws() + "/sub/.git/config");
  // sub/.git is bound read-only in the sandbox (say): what changed there was the user's doing on the host.
  std::vector<RepoFinding> findings = RepoGuard({s.ws() + "/"}, start, {s.ws() + "/sub/.git/"}).check();
  ASSERT_EQ(1u, findings.size()) << text_of(findings);
  EXPECT_EQ(s.ws() + "/other/.git/config", findings[0].path);
  EXPECT_EQ(config, read_file(s.ws() + "/sub/.git/config"));
}

TEST(RepoGuard, SymlinksAreNeverFollowedOutOfTheRoots) {
  REQUIRE_GIT();
  Scene s;
  struct timespec start = Scene::start();
  // A repository outside the roots, with a payload, reachable through a link inside: not the guard's to change.
  ASSERT_EQ(0, s.run(repo("\"$SCENE/outside\"") + " && " + kFsmonitor + " >> \"$SCENE/outside/.git/config\" && " +
                     "ln -s \"$SCENE/outside\" link && ln -s \"$SCENE/outside/.git\" linked-git")
                   .status);
  std::string config = read_file(s.scene() + "/outside/.git/config");
  std::vector<RepoFinding> findings = RepoGuard({s.ws()}, start).check();
  EXPECT_TRUE(findings.empty()) << text_of(findings);
  EXPECT_EQ(config, read_file(s.scene() + "/outside/.git/config"));
}

TEST(RepoGuard, RepeatedChecksReportEachPlantingOnce) {
  REQUIRE_GIT();
  Scene s;
  ASSERT_EQ(0, s.run(repo("sub")).status);
  struct timespec start = Scene::start();
  RepoGuard guard({s.ws()}, start);
  ASSERT_EQ(0, s.run(kFsmonitor + " >> sub/.git/config && " + hook("sub/.git/hooks/pre-commit")).status);
  EXPECT_EQ(2u, guard.check().size());
  // What the guard wrote (the new config, the quarantined files) is not reported again.
  std::vector<RepoFinding> again = guard.check();
  EXPECT_TRUE(again.empty()) << text_of(again);
  ASSERT_EQ(0, s.run(kFsmonitor + " >> sub/.git/config && " + hook("sub/.git/hooks/pre-commit")).status);
  std::vector<RepoFinding> second = guard.check();
  ASSERT_EQ(2u, second.size()) << text_of(second);
  EXPECT_EQ("rewritten without core.fsmonitor; the original is kept in config.oishell-quarantine.2", second[0].action);
  EXPECT_EQ("moved to pre-commit.oishell-quarantine.2; git runs a hook only by its exact name", second[1].action);
}

TEST(RepoGuard, DeeperThanTheLimitIsNamedNotSilentlySkipped) {
  Scene s;
  struct timespec start = Scene::start();
  std::string deep = s.ws();
  for (int i = 0; i < RepoGuard::kMaxDepth + 2; ++i) deep += "/d";
  fs::create_directories(deep + "/.git/hooks");
  std::ofstream(deep + "/.git/hooks/pre-commit") << "#!/bin/sh\n";
  std::vector<RepoFinding> findings = RepoGuard({s.ws()}, start).check();
  ASSERT_EQ(1u, findings.size()) << text_of(findings);
  std::string limit = s.ws();
  for (int i = 0; i < RepoGuard::kMaxDepth; ++i) limit += "/d";
  EXPECT_EQ(limit, findings[0].path);
  EXPECT_EQ("has directories more than 64 levels below the root", findings[0].found);
  EXPECT_EQ("not checked below this level", findings[0].action);
}

TEST(RepoGuard, FindingsAreBoundedButEverythingIsHandled) {
  Scene s;
  fs::create_directories(s.ws() + "/r/.git/hooks");
  struct timespec start = Scene::start();
  for (int i = 0; i < 300; ++i) std::ofstream(s.ws() + "/r/.git/hooks/h" + std::to_string(1000 + i)) << "x";
  std::vector<RepoFinding> findings = RepoGuard({s.ws()}, start).check();
  ASSERT_EQ(RepoGuard::kMaxFindings, findings.size());
  EXPECT_EQ(s.ws() + "/r/.git/hooks/h1000", findings[0].path);  // sorted by path
  EXPECT_EQ("45 more findings", findings.back().found);
  EXPECT_FALSE(fs::exists(s.ws() + "/r/.git/hooks/h1299"));
  EXPECT_TRUE(fs::exists(s.ws() + "/r/.git/hooks/h1299.oishell-quarantine"));
}

TEST(RepoGuard, ControlCharactersInNamesAreShownEscaped) {
  Scene s;
  std::string dir = s.ws() + "/a\x1b[31m\nb";
  fs::create_directories(dir);
  struct timespec start = Scene::start();
  std::ofstream(dir + "/.git") << "gitdir: /x\x1b]0;t\x07\n";
  std::vector<RepoFinding> findings = RepoGuard({s.ws()}, start).check();
  ASSERT_EQ(1u, findings.size()) << text_of(findings);
  EXPECT_EQ(s.ws() + "/a\\x1b[31m\\x0ab/.git", findings[0].path);
  EXPECT_EQ(
      ".git (gitdir: /x\\x1b]0;t\\x07) written during the run: git would take the repository from where it "
      "points",
      findings[0].found);
}

// A directory on a read-only mount cannot have changed: it is skipped, and a config there is neither reported nor
// (uselessly) attempted. Played in a user and mount namespace of a child process, which bind-mounts ws/ro read-only.
TEST(RepoGuard, ReadOnlyMountsAreSkipped) {
  Scene s;
  fs::create_directories(s.ws() + "/ro/r/.git");
  fs::create_directories(s.ws() + "/rw/r/.git");
  struct timespec start = Scene::start();
  std::ofstream(s.ws() + "/ro/r/.git/config") << "[alias]\n\tst = !x\n";
  std::ofstream(s.ws() + "/rw/r/.git/config") << "[alias]\n\tst = !x\n";
  uid_t uid = ::geteuid();
  gid_t gid = ::getegid();
  pid_t pid = ::fork();
  ASSERT_NE(-1, pid);
  if (pid == 0) {
    auto write = [](const std::string& path, const std::string& text) {
      int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      if (fd >= 0) ::close(fd);
      return ok;
    };
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) ::_exit(77);
    if (!write("/proc/self/setgroups", "deny") || !write("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
        !write("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
      ::_exit(77);
    }
    std::string ro = s.ws() + "/ro";
    // The remount keeps the flags the mount below has (a container's /tmp is nosuid,nodev: locked in this user
    // namespace, so a remount that drops them is refused).
    struct statvfs below {};
    unsigned long kept = 0;
    if (::statvfs(ro.c_str(), &below) == 0) {
      if (below.f_flag & ST_NOSUID) kept |= MS_NOSUID;
      if (below.f_flag & ST_NODEV) kept |= MS_NODEV;
      if (below.f_flag & ST_NOEXEC) kept |= MS_NOEXEC;
      if (below.f_flag & ST_NOATIME) kept |= MS_NOATIME;
      if (below.f_flag & ST_NODIRATIME) kept |= MS_NODIRATIME;
      if (below.f_flag & ST_RELATIME) kept |= MS_RELATIME;
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount(ro.c_str(), ro.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        ::mount(nullptr, ro.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, nullptr) != 0) {
      ::_exit(78);
    }
    std::vector<RepoFinding> findings = RepoGuard({s.ws()}, start).check();
    bool rw_named = findings.size() == 1 && findings[0].path == s.ws() + "/rw/r/.git/config";
    ::_exit(rw_named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(pid, ::waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "no unprivileged user namespaces: cannot make a read-only mount";
  if (WEXITSTATUS(status) == 78) GTEST_SKIP() << "mounting in a user namespace is refused here";
  EXPECT_EQ(0, WEXITSTATUS(status)) << "the config on the read-only mount was named, or the writable one was not";
  EXPECT_EQ("[alias]\n\tst = !x\n", read_file(s.ws() + "/ro/r/.git/config"));
}

// The walk's cost: 100k files in 5k directories (node_modules-like), nothing to neutralise. Run with
// --gtest_also_run_disabled_tests; it prints the time of one check, then what a snapshot adds: the time
// snapshot_async() takes to return, its walk (check() right after snapshot_async(), less a check alone), check()
// once the snapshot is taken, and destroying a guard whose snapshot has just started.
TEST(RepoGuard, DISABLED_CostOf100kEntries) {
  Scene s;
  for (int d = 0; d < 5000; ++d) {
    std::string dir = s.ws() + "/node_modules/p" + std::to_string(d / 50) + "/m" + std::to_string(d);
    fs::create_directories(dir);
    for (int f = 0; f < 20; ++f) std::ofstream(dir + "/f" + std::to_string(f) + ".js");
  }
  struct timespec start = Scene::start();
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point from) {
    return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
  };
  auto cpu_ms = [] {
    struct timespec t;
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);  // all threads
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
  };
  RepoGuard guard({s.ws()}, start);
  for (int round = 0; round < 3; ++round) {
    auto t0 = Clock::now();
    double c0 = cpu_ms();
    std::vector<RepoFinding> findings = guard.check();
    double wall = ms(t0), cpu = cpu_ms() - c0;
    EXPECT_TRUE(findings.empty());
    std::printf("check %d: %.1f ms (%.1f ms CPU) for 5,102 directories and 105,101 entries\n", round, wall, cpu);
  }
  for (int round = 0; round < 3; ++round) {
    RepoGuard snapped({s.ws()}, start);
    auto t0 = Clock::now();
    double c0 = cpu_ms();
    snapped.snapshot_async();
    double returned = ms(t0);
    std::vector<RepoFinding> findings = snapped.check();  // waits for the snapshot's walk, then walks
    double wall = ms(t0), cpu = cpu_ms() - c0;
    EXPECT_TRUE(findings.empty());
    auto t1 = Clock::now();
    double c1 = cpu_ms();
    findings = snapped.check();
    double again = ms(t1), again_cpu = cpu_ms() - c1;
    EXPECT_TRUE(findings.empty());
    std::printf("snapshot %d: snapshot_async() returned in %.3f ms; with check(): %.1f ms (%.1f ms CPU); check() "
                "after it: %.1f ms (%.1f ms CPU)\n",
                round, returned, wall, cpu, again, again_cpu);
  }
  auto t0 = Clock::now();
  {
    RepoGuard dropped({s.ws()}, start);
    dropped.snapshot_async();
  }
  std::printf("a guard destroyed while its snapshot walks: %.3f ms\n", ms(t0));
}

}  // namespace
}  // namespace oishell::test
