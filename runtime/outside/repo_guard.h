#pragma once
// Git runs what a repository's metadata names (config: fsmonitor, pager, editor, drivers, aliases, helpers; hooks)
// and follows its redirections (commondir, a `.git` file's `gitdir:`, worktrees/*, submodule git dirs under
// modules/). The workspace's own .git is bound read-only where it exists at start (mount_plan.cc), but a sandbox
// can still create a repository anywhere it can write, or change one nested in the workspace, and the user runs
// `git status` there afterwards on the host. RepoGuard finds what git would obey in the writable trees that was
// written during the run, neutralises it before the host's git can read it, and says what it did.
//
// "Written during the run": ctime >= start. A process cannot set ctime, and writing, creating, renaming or linking
// a file sets it, so a file with an older ctime is the user's and is never touched, unless the git directory
// holding it is new since the start (below).
//
// Walk (repo_walk.h): every directory under each root, depth-first, each opened relative to its parent's fd (no
// path is resolved after the root, no symlink is followed, so a process still running inside cannot redirect the
// walk out of the roots). A directory on a read-only mount is skipped with its subtree. A git directory is a
// directory entry named `.git`, or any directory git would accept as one (setup.c: is_git_directory): a `HEAD` that
// is not a directory, with `objects` and `refs` or with `commondir`. In each (repo_neutralise.h):
//   config, config.worktree  new: re-serialised with only the allowlisted keys (git_config.h); when that differs
//                            from the file, the file is renamed to `<name>.oishell-quarantine` (.2, .3, ... when
//                            taken) and the safe text is put in its place (nothing when no key is left); a symlink
//                            or other non-file is only moved to quarantine.
//   commondir                new: moved to quarantine.
//   hooks                    new and not a directory: moved to quarantine; else every new entry in it whose name
//                            does not end in `.sample` is renamed `<name>.oishell-quarantine` (git runs a hook by
//                            its exact name only).
//   worktrees/*/             new commondir, gitdir, config.worktree: moved to quarantine; a new non-directory in
//                            worktrees/ too.
//   modules                  new and not a directory: moved to quarantine; the git dirs inside are found and checked
//                            by the walk like any other.
// An entry named `.git` that is not a directory (a `gitdir:` file, a symlink) and is new is moved to
// `.git.oishell-quarantine`. A new `.git` directory is checked file by file like any other, so `git init` and
// `git commit` during the run leave a working repository that nothing is reported in.
//
// Git directories new since the start (snapshot_async()). A directory renamed into a repository's place keeps the
// old ctimes of the files it holds (a rename sets the moved inode's ctime only), and so does an old directory that
// becomes a git directory when HEAD, objects and refs are added to it: an old directory holding `config` (with
// core.fsmonitor) and `hooks/pre-commit`, renamed to `sub/.git`, would pass the per-file rule. So, right after the
// sandbox starts, a thread walks the roots as check() does (the same walk, bounds and skips; it changes nothing)
// and records each git directory whose own ctime is older than the start, by path and (dev, ino), with its `hooks`
// directory when that is a directory older than the start too. Only git directories are recorded, never every
// directory. At check(), a git directory is trusted only when recorded at the same path with the same (dev, ino);
// any other one (made, moved or renamed during the run, under a directory renamed during the run, or made a git
// directory during the run) is new, and every entry above is taken as new whatever its ctime: its config is
// sanitised (a config git wrote comes out byte-identical and unchanged, so `git init` and `git clone` during the run
// leave no finding), and its commondir, worktrees/*/ entries and hooks but the samples are moved to quarantine. A
// trusted git directory keeps the per-file rule, so one in which the run only used git (status, commit) keeps the
// user's config and hooks as they are; but a `hooks` directory in it that is not the one recorded there (one
// renamed into place) has every hook in it taken as new.
// The snapshot races with the sandbox, safely by construction: a directory moved into place before the walk reaches it
// has a ctime >= start and is not recorded; one recorded and then moved is at another path at check(). A directory made
// in a recorded one's place, even under its reused inode number, holds only what was created or renamed into it during
// the run: files new by their own ctime, and git and hooks directories that are not the ones recorded (an old directory
// renamed in existed beside the recorded one, so it is another inode). The race costs only on the safe side: a
// repository the run changed before the walk reached it (a `git status` there rewrites .git/index) is not recorded, so
// it is checked as new and its config keys beyond the allowlist and its hooks are moved to quarantine and reported
// (likewise its hooks alone, when the run changed its hooks directory first). Without a snapshot, check() judges every
// entry by its own ctime.
//
// Everything is done relative to directory fds (repo_files.h: openat, renameat2 RENAME_NOREPLACE, linkat/unlinkat
// when a file system lacks it) and nothing follows a link. A directory made unreadable during the run (mode 000) is
// reported; when it is ours it is checked with the owner's permissions added for the check and its mode put back,
// otherwise it is reported as not checked (an old one git cannot enter either is passed over). A git directory made
// read-only gets the owner's write permission while its files are moved, then its mode back.
//
// Bounds: kMaxDepth levels below each root (a deeper directory is reported as not checked), no limit on entries,
// kMaxConfigBytes per config file (a larger one is moved to quarantine), kMaxFindings findings (then one finding
// saying how many more there were; the work is done regardless).
//
// Not covered: hooks reached through the user's own settings (an old core.hooksPath or `hooks` symlink naming a
// writable directory: protected paths such as `.husky` cover the usual ones). With a snapshot: old metadata no walk
// has checked (deeper than kMaxDepth or unreadable when an earlier run's walk passed, and reported then, or left by
// a run without the guard) brought within reach by renaming a directory above it before the snapshot's walk gets
// there; and, for a move made before the walk gets there, a file system whose rename does not set the moved
// inode's ctime (Linux's local file systems all set it). Without a snapshot: old files moved into a repository's
// place inside their directory, or in a directory made a git directory during the run.
#include <time.h>

#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace oishell {

struct RepoFinding {
  // Plain words for the user and the model; control bytes in names are shown as \xNN.
  std::string path;    // host path of what was found: "/w/sub/.git/config"
  std::string found;   // what it is: "written during the run; sets core.fsmonitor"
  std::string action;  // what was done: "rewritten without core.fsmonitor; the original is kept in
                       // config.oishell-quarantine"
  bool operator==(const RepoFinding&) const = default;
};

class RepoGuard {
 public:
  // roots: absolute host paths the sandbox can write (the workspace, read-write binds); a root inside another is
  // walked once. start: a CLOCK_REALTIME_COARSE reading (start_time()) taken before the sandbox could write
  // anything. skip: host paths inside the roots the sandbox cannot write (read-only binds such as the workspace's
  // .git): not walked and never changed, so the user's own edits there during the run are left alone.
  RepoGuard(std::vector<std::string> roots, struct timespec start, std::vector<std::string> skip = {});

  // Stops a snapshot still being taken, and waits for its thread.
  ~RepoGuard();
  RepoGuard(RepoGuard&&) noexcept;
  RepoGuard& operator=(RepoGuard&&) noexcept;

  // CLOCK_REALTIME_COARSE now: the clock file timestamps are taken from.
  static struct timespec start_time();

  // Starts taking the snapshot of the git directories there at the start (see the top of this file) on a thread of
  // its own, named kSnapshotThreadName, which takes no signal, and returns at once (about 0.1 ms); check() waits for
  // it. Call it right after the sandbox starts (later calls do nothing): called later, it still covers what was
  // moved before its walk got there, but a repository the run has changed by then is checked as new. Preconditions:
  // the calling process is no longer cloned with a raw clone/clone3 that skips libc's fork handlers (InitProcess::
  // clone), and needs no single-threaded step (unshare(CLONE_NEWUSER), setns into a user namespace) until check()
  // has joined the thread. When no thread can be started, the walk is done before this returns.
  void snapshot_async();
  static constexpr char kSnapshotThreadName[] = "repo-snapshot";
  // The same snapshot, taken now on the caller's time (for a run too short to have taken it beside the sandbox).
  // Nothing when a snapshot was started already.
  void snapshot_now();

  // Walks the roots, neutralises what was written during the run, and returns what it found, sorted by path. Waits
  // first for a snapshot still being taken. Repeatable: what it wrote itself is not reported again. Not to be called
  // beside another call on the same guard. Cost: seven syscalls per directory (openat; fstat and two fcntl in
  // fdopendir; statx; two getdents64; close), an fstatat per entry only where d_type is unknown, and a few per git
  // directory, with a config read and parsed in each new one. 100k files in 5k directories, warm cache: about 90 ms
  // of CPU (RepoGuard tests, DISABLED_CostOf100kEntries), the same after a snapshot; the snapshot's walk takes about
  // as much again, on its own thread while the sandbox runs, and stops within a few ms when the guard is destroyed.
  [[nodiscard]] std::vector<RepoFinding> check();

  static constexpr int kMaxDepth = 64;
  static constexpr size_t kMaxConfigBytes = 1 << 20;
  static constexpr size_t kMaxFindings = 256;

 private:
  std::vector<std::string> roots_;
  struct timespec start_;
  std::set<std::string> skip_;
  struct Snapshot;
  std::unique_ptr<Snapshot> snapshot_;  // from snapshot_async()
};

}  // namespace oishell
