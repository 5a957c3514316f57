#pragma once
// What the repository guard's snapshot (RepoGuard::snapshot_async, repo_guard.h) records: the git directories, and
// their hooks directories, that were there before the run, each by path and by inode. The recording walk
// (repo_walk.h) fills it; the check (repo_neutralise.h) trusts a directory only when it is found at a recorded path
// as the same inode.
#include <sys/types.h>

#include <map>
#include <string>

namespace oishell::repo_guard {

// The directory at a recorded path when the snapshot was taken.
struct DirId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const DirId&) const = default;
};

// By host path ("/w/sub/.git", "/w/sub/.git/hooks"): git directories and their hooks directories older than the
// start.
using TrustedDirs = std::map<std::string, DirId>;

}  // namespace oishell::repo_guard
