#pragma once
// The repository guard's walk (repo_guard.h) over its roots, in one of two modes that go the same way (the same
// directories, bounds, skips and notion of a git directory): checking (RepoGuard::check(), which hands each git
// directory and each `.git` entry that is not a directory to a Neutraliser, repo_neutralise.h), and recording (the
// snapshot, which changes nothing and reports nothing, and notes each git directory older than the start in a
// TrustedDirs, repo_snapshot.h).
//
// Every directory under each root is visited depth-first, each opened with O_NOFOLLOW|O_DIRECTORY relative to its
// parent's fd: no path is resolved after the root and no symlink is followed, so a process still running inside
// cannot redirect the walk out of the roots. A directory is listed with readdir, using d_type (an lstat only for
// DT_UNKNOWN). A directory on a read-only mount is skipped with its subtree (statx's mount id per directory,
// statvfs once per mount), and so is one whose path is in `skip`. Directories deeper than RepoGuard::kMaxDepth are
// reported, not walked. A git directory is a directory named `.git`, or any directory git would accept as one
// (setup.c: is_git_directory): a `HEAD` that is not a directory, with `objects` and `refs` or with `commondir`.
#include <time.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "runtime/outside/repo_files.h"
#include "runtime/outside/repo_guard.h"
#include "runtime/outside/repo_neutralise.h"
#include "runtime/outside/repo_snapshot.h"

namespace oishell::repo_guard {

class Walker {
 public:
  // Neutralises what the run wrote. `trusted`: what the snapshot recorded (nullptr: none was taken, and every
  // entry is judged by its own ctime). `skip` (and `trusted`) must outlive the walker.
  static Walker checking(const struct timespec& start, const std::set<std::string>& skip,
                         const TrustedDirs* trusted) {
    return Walker(start, skip, trusted, nullptr, {});
  }
  // Changes nothing and reports nothing: puts in `*record` each git directory older than the start, and its hooks
  // directory when that is older too. Ends early when `stop` is requested. `skip` and `record` must outlive it.
  static Walker recording(const struct timespec& start, const std::set<std::string>& skip, TrustedDirs* record,
                          std::stop_token stop) {
    return Walker(start, skip, nullptr, record, std::move(stop));
  }

  // Walks the tree at `root`, an absolute host path (the only path this opens; everything below is reached
  // through its parent's fd).
  void walk_root(const std::string& root);

  // What checking found, in the order found (nothing when recording).
  std::vector<RepoFinding> take() { return check_ ? check_->take() : std::vector<RepoFinding>(); }

 private:
  Walker(const struct timespec& start, const std::set<std::string>& skip, const TrustedDirs* trusted,
         TrustedDirs* record, std::stop_token stop);

  void add(const std::string& path, std::string found, std::string action);

  // The snapshot's part at a git directory. Only what is older than the start is recorded: a directory moved into
  // place (or made a git directory) before the walk got here has a newer ctime, and stays untrusted.
  void record(int fd, const std::string& path);

  // Whether the directory `fd` is on a read-only mount, asking statvfs once per mount (statx's mount id; when the
  // kernel has none, every time).
  bool read_only(int fd, uint64_t parent_mount, uint64_t* mount);

  // Opens the subdirectory `name` of `parent` (at `path`) to list it, never through a symlink. Checking: as
  // Neutraliser::open_subdir (an unreadable one is reported, and opened when it is ours and new); recording: what
  // cannot be opened is not recorded.
  OpenedDir open_subdir(DirEditor& parent, const std::string& path, const std::string& name);

  void visit(Dir listing, const std::string& path, bool dot_git, int depth, uint64_t mount);

  struct timespec start_;
  const std::set<std::string>& skip_;
  TrustedDirs* record_;               // recording: where to put it; nullptr when checking
  std::optional<Neutraliser> check_;  // checking: what neutralises and reports; empty when recording
  std::stop_token stop_;
  std::map<uint64_t, bool> read_only_;
};

}  // namespace oishell::repo_guard
