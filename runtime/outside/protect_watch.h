#pragma once
// Protected paths (files the host runs later: .git/hooks, .git/config, .envrc, ...) are bound read-only where they
// exist at start. One that did not exist then is writable through the workspace, and a parent can be renamed away
// and recreated, so the supervisor snapshots every protected path (spec.protected_paths) before the sandbox starts
// and names, at exit, each one that was created, removed, modified or replaced.
//
// A snapshot is an lstat per path, plus for a directory a recursive listing (names, type, size, mtime, ctime,
// inode, mode; no file contents are read: ctime cannot be set back by a process, so a rewrite with a forged mtime is
// still seen). Paths are opened with RESOLVE_NO_SYMLINKS, so a path that is reached through a symlink at exit (a
// `.git` swapped for a link to another tree) is reported as replaced, and no scan ever leaves the path it watches.
// Bounds: kMaxEntries entries and kMaxDepth levels per protected path. A tree beyond them is compared on the
// entries listed, and named once as "(not fully checked: ...)".
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace oishell {

class ProtectWatch {
 public:
  // Records the state of each host path. Cheap: a stat per path and per entry of a protected directory.
  void snapshot(const std::vector<std::string>& paths);
  // What differs from the snapshot now, sorted by path, each "PATH (created|removed|modified|replaced)", or
  // "PATH (not fully checked: more than N entries)". Empty when nothing changed.
  std::vector<std::string> changes() const;

  static constexpr size_t kMaxEntries = 1024;
  static constexpr int kMaxDepth = 16;

  struct Entry {
    char kind = '-';  // f file, d directory, l symlink, o other, s reached through a symlink, ? unreadable (errno)
    unsigned mode = 0;
    long long size = 0, mtime_ns = 0, ctime_ns = 0;
    unsigned long long ino = 0, dev = 0;
  };
  struct Tree {
    std::map<std::string, Entry> entries;  // "" is the path itself; others are relative ("pre-commit", "a/b")
    bool truncated = false;
  };

 private:
  std::vector<std::string> paths_;
  std::vector<Tree> initial_;
};

}  // namespace oishell
