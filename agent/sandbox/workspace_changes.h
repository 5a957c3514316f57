#pragma once
// What a code block changed in the workspace: the files under it are read before the block (a snapshot) and after,
// and compared. The web UI and the editors (ACP) show the result as diffs; the agent runs outside the sandbox and
// reads the workspace as the user does.
//
// Bounded, so a block in a large directory costs little and says what it skipped: at most `max_files` files, text
// kept only for files up to `max_file_bytes` while the total stays under `max_total_bytes` (larger files are
// compared by size, modification time and inode, and summarised). Regular files only; symbolic links are not
// followed, other file systems mounted below are not entered, `.git` directories are skipped (their churn is not the
// user's change; the supervisor watches what in them matters).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace oishell::agent {

struct ChangeLimits {
  size_t max_files = 20000;
  uint64_t max_file_bytes = 256 * 1024;
  uint64_t max_total_bytes = 32 * 1024 * 1024;
};

struct FileChange {
  enum class Kind { created, modified, deleted };
  Kind kind = Kind::modified;
  std::string path;  // relative to the workspace, '/'-separated
  uint64_t old_size = 0, new_size = 0;
  bool binary = false;     // not text (a NUL byte, or not UTF-8): summarised, no text
  bool too_large = false;  // over the bounds: summarised, no text
  // Text files within bounds: the old text absent when created, the new when deleted.
  std::optional<std::string> old_text, new_text;
};

class WorkspaceSnapshot {
 public:
  // Never fails: what cannot be read is left out, and a root that cannot be opened is an empty snapshot that says so.
  static WorkspaceSnapshot take(const std::string& root, const ChangeLimits& limits = {});
  const std::string& root() const { return root_; }
  // "" or why the walk left files out (a bound reached, a directory unreadable), to show the user.
  const std::string& incomplete() const { return incomplete_; }

  struct Entry {
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    uint64_t inode = 0;
    std::optional<std::string> content;  // read when within the bounds
  };
  const std::map<std::string, Entry>& entries() const { return entries_; }
  // The walk stopped at max_files.
  bool files_bounded() const { return files_bounded_; }

 private:
  friend class SnapshotWalk;
  std::string root_;
  std::string incomplete_;
  bool files_bounded_ = false;
  std::map<std::string, Entry> entries_;  // by relative path
};

// What changed from `before` to `after` (snapshots of one root), sorted by path.
std::vector<FileChange> workspace_changes(const WorkspaceSnapshot& before, const WorkspaceSnapshot& after);

// A unified diff of a text change ("--- a/x", "+++ b/x", hunks with `context_lines` of context), cut at about
// `max_bytes` with a line saying so; a one-line summary for a binary or too large change.
std::string unified_diff(const FileChange& change, size_t context_lines = 3, size_t max_bytes = 64 * 1024);

// "created notes.txt", "modified src/a.py", "deleted old.log".
std::string describe_change(const FileChange& change);

}  // namespace oishell::agent
