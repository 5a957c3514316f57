#pragma once
// What RepoGuard::check() does at each place its walk (repo_walk.h) finds: judges whether git metadata there is new
// (written during the run, or in a git directory new since the start), neutralises it (sanitises a config, moves
// the rest to quarantine) with the fd-relative operations of repo_files.h, and words the findings. The rules, entry
// by entry, are those at the top of repo_guard.h.
#include <time.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/outside/repo_files.h"
#include "runtime/outside/repo_guard.h"
#include "runtime/outside/repo_snapshot.h"

namespace oishell::repo_guard {

class Neutraliser {
 public:
  // `start`: the guard's start time; `skip`: host paths never changed (must outlive this); `trusted`: what the
  // snapshot recorded, or nullptr when none was taken (then every entry is judged by its own ctime alone).
  Neutraliser(const struct timespec& start, const std::set<std::string>& skip, const TrustedDirs* trusted)
      : start_(start), skip_(skip), trusted_(trusted) {}

  // Records a finding at `path` (made printable here).
  void add(const std::string& path, std::string found, std::string action);

  // Opens the subdirectory `name` of `parent` (at `path`) to list it, never through a symlink. One that cannot be
  // read is opened anyway when it is ours and new (the owner's permissions are added until the result dies) and is
  // reported either way; when it was neither new nor searchable, nothing can have changed inside since the start.
  // A `.git` replaced meanwhile by a link or a file is checked as such.
  OpenedDir open_subdir(DirEditor& parent, const std::string& path, const std::string& name);

  // Checks the git directory `git` (at `path`): its config and config.worktree, commondir, hooks, worktrees/*/ and
  // modules. It is trusted when the snapshot recorded it at `path` (or no snapshot was taken); otherwise every entry
  // in it counts as new.
  void check_git_dir(DirEditor& git, const std::string& path);

  // An entry named .git (`name` in `dir`, at `dir_path`) that is not a directory: a `gitdir:` file or a symlink
  // leads git to a repository elsewhere. Moved to quarantine when written during the run.
  void check_dot_git_entry(DirEditor& dir, const std::string& dir_path, const std::string& name);

  // The findings so far, in the order found.
  std::vector<RepoFinding> take() { return std::move(findings_); }

 private:
  // Whether the directory `fd`, found at `path`, is the one the snapshot recorded there; without a snapshot, yes.
  bool trusted(int fd, const std::string& path) const;

  // `fresh` (here and below): "" when the directory is trusted and each entry is judged by its own ctime, else why
  // every entry counts as new ("a git directory new since the start").
  void check_config(DirEditor& dir, const std::string& dir_path, const std::string& name, const std::string& fresh);
  // Puts `text` in place of `name`: written to a new file beside it, the original moved to quarantine, the new
  // file renamed over whatever is at `name` by then.
  void replace(DirEditor& dir, const std::string& path, const std::string& name, const std::string& text, mode_t mode,
               std::string found, const std::string& rewritten);
  void check_hooks(DirEditor& git, const std::string& git_path, const std::string& fresh);
  // A worktrees/*/ directory git would use is a git directory of its own (HEAD and commondir), found by the walk and
  // trusted or not for itself; here it is checked as part of this one too.
  void check_worktrees(DirEditor& git, const std::string& git_path, const std::string& fresh);

  // Moves `name` in `dir` aside when it is new (written during the run, or `fresh`), and reports it.
  void move_if_new(DirEditor& dir, const std::string& dir_path, const std::string& name, const std::string& fresh,
                   const std::string& noun, const std::string& consequence, const std::string& after);
  // Moves `name` in `dir` (at `path`) to quarantine and reports `found` with what was done, then `after`.
  void move_aside(DirEditor& dir, const std::string& path, const std::string& name, std::string found,
                  const std::string& after);

  struct timespec start_;
  const std::set<std::string>& skip_;
  const TrustedDirs* trusted_;
  std::vector<RepoFinding> findings_;
};

}  // namespace oishell::repo_guard
