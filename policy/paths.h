#pragma once
// The one place where policy paths are expanded and normalised. Variables: `~` and `~/...`, `$HOME`, `$WORKSPACE`,
// `$TMPDIR` (also `${NAME}`), only at the start of a path. Normalisation is lexical: `//` and `.` collapse, a
// trailing slash goes, `..` is refused (it would make "inside the workspace" depend on symlinks). Symlinks are
// resolved later, when compiling (policy/host_fs.h).
#include <string>
#include <string_view>

#include "base/status.h"

namespace oishell::policy {

enum class PathRole {
  workspace,           // relative = relative to the current directory; $WORKSPACE not allowed
  absolute,            // must be absolute after expansion (read_only, read_write, hide)
  workspace_relative,  // relative to the workspace, or $WORKSPACE/...; absolute paths refused (protect)
};

struct PathVars {
  std::string cwd;
  std::string workspace;
  std::string home;
  std::string tmpdir;
};

// The expanded, normalised absolute path; the error message says what is wrong and how to write it instead
// ("relative path where an absolute one is needed (write $WORKSPACE/build for a path in the workspace)").
Result<std::string> expand_path(std::string_view text, PathRole role, const PathVars& vars);

// The same checks without host facts (placeholder values), for validation; ok when the path is well formed.
Status check_path_syntax(std::string_view text, PathRole role);

// Collapses `//` and `.`, drops a trailing slash; `path` must be absolute and free of `..`.
std::string normalise_path(std::string_view path);

// True when `path` is `base` or lies below it (both normalised absolute paths).
bool path_within(std::string_view path, std::string_view base);

// How many components a normalised absolute path has: 0 for `/`, 1 for `/a`, 2 for `/a/b`.
size_t path_depth(std::string_view path);

}  // namespace oishell::policy
