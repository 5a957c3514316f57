#include "runtime/outside/repo_neutralise.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string_view>

#include "base/git_config.h"
#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::repo_guard {
namespace {

constexpr char kNewGitDir[] = "a git directory new since the start";
constexpr char kNewHooksDir[] = "a hooks directory new since the start";

// Why an entry is checked: written during the run (ctime >= start), or held by a directory that is new (`fresh`:
// "a git directory new since the start") though the entry itself is older.
struct Newness {
  bool written = false;
  std::string fresh;
  explicit operator bool() const { return written || !fresh.empty(); }
};

// "a .git file (gitdir: ../x) written during the run", "a symlink to /x placed during the run", "a fifo placed
// during the run", "a hook (#!/bin/sh) in a git directory new since the start".
std::string describe(int dirfd, const std::string& name, const struct stat& st, const std::string& noun,
                     const Newness& why) {
  std::string seen = peek(dirfd, name, st);
  std::string what;
  if (S_ISREG(st.st_mode)) {
    what = noun + (seen.empty() ? "" : " (" + seen + ")");
  } else if (S_ISLNK(st.st_mode)) {
    what = noun + " as a symlink to " + seen;
  } else {
    const char* kind = S_ISDIR(st.st_mode)    ? "directory"
                       : S_ISFIFO(st.st_mode) ? "fifo"
                       : S_ISSOCK(st.st_mode) ? "socket"
                                              : "device";
    what = noun + " as a " + kind;
  }
  if (!why.written) return what + " in " + why.fresh;
  return what + (S_ISREG(st.st_mode) ? " written" : " placed") + " during the run";
}

}  // namespace

void Neutraliser::add(const std::string& path, std::string found, std::string action) {
  findings_.push_back({printable(path), std::move(found), std::move(action)});
}

bool Neutraliser::trusted(int fd, const std::string& path) const {
  if (!trusted_) return true;
  auto it = trusted_->find(path);
  struct stat st;
  return it != trusted_->end() && ::fstat(fd, &st) == 0 && it->second == DirId{st.st_dev, st.st_ino};
}

OpenedDir Neutraliser::open_subdir(DirEditor& parent, const std::string& path, const std::string& name) {
  OpenedDir d;
  d.dir = open_dir_at(parent.fd(), name);
  if (d.dir) return d;
  int err = errno;
  if (err == ENOENT) return d;           // removed meanwhile
  if (err == ELOOP || err == ENOTDIR) {  // replaced meanwhile by a link or a file
    if (is_dot_git(name)) check_dot_git_entry(parent, path.substr(0, path.rfind('/')), name);
    return d;
  }
  auto st = lstat_at(parent.fd(), name);
  bool changed = st && is_new(*st, start_);
  if (err == EACCES) {
    d.path_fd.reset(::openat(parent.fd(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat own;
    if (d.path_fd && ::fstat(d.path_fd.get(), &own) == 0 && is_new(own, start_)) {
      d.lift = std::make_unique<ModeLift>(d.path_fd.get(), S_IRWXU);
      if (d.lift->lifted()) d.dir = Dir(UniqueFd(::openat(d.path_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
      if (d.dir) {
        add(path, "could not be read (mode " + octal_mode(own.st_mode) + "); changed during the run",
            "checked with its owner's permissions added for the check; mode " + octal_mode(own.st_mode) +
                " restored");
        return d;
      }
      d.lift.reset();
    }
    bool searchable = ::faccessat(parent.fd(), name.c_str(), X_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0;
    if (!changed && !searchable) return d;
  }
  add(path, "could not be opened (" + errno_text(err) + ")" + (changed ? ", changed during the run" : ""),
      "not checked: what git could reach inside it was not examined");
  return d;
}

void Neutraliser::check_git_dir(DirEditor& git, const std::string& path) {
  const std::string fresh = trusted(git.fd(), path) ? "" : kNewGitDir;
  check_config(git, path, "config", fresh);
  check_config(git, path, "config.worktree", fresh);
  move_if_new(git, path, "commondir", fresh, "commondir",
              "git would take this repository's config, hooks and objects from where it points", "");
  check_hooks(git, path, fresh);
  check_worktrees(git, path, fresh);
  auto modules = lstat_at(git.fd(), "modules");
  if (modules && !S_ISDIR(modules->st_mode)) {
    move_if_new(git, path, "modules", fresh, "modules", "git would look for submodule repositories through it", "");
  }
}

void Neutraliser::move_if_new(DirEditor& dir, const std::string& dir_path, const std::string& name,
                              const std::string& fresh, const std::string& noun, const std::string& consequence,
                              const std::string& after) {
  auto st = lstat_at(dir.fd(), name);
  if (!st) return;
  Newness why{is_new(*st, start_), fresh};
  if (!why) return;
  std::string path = join(dir_path, name);
  if (skip_.count(path)) return;
  move_aside(dir, path, name, describe(dir.fd(), name, *st, noun, why) + ": " + consequence, after);
}

void Neutraliser::move_aside(DirEditor& dir, const std::string& path, const std::string& name, std::string found,
                             const std::string& after) {
  auto moved = quarantine(dir, name);
  if (!moved) {
    add(path, std::move(found),
        "could not be moved aside (" + moved.status().message() + "): do not run git here until it is removed");
  } else if (moved->empty()) {
    add(path, std::move(found), "deleted (every quarantine name was taken)" + after);
  } else {
    add(path, std::move(found), "moved to " + printable(*moved) + after);
  }
}

void Neutraliser::check_config(DirEditor& dir, const std::string& dir_path, const std::string& name,
                               const std::string& fresh) {
  auto st = lstat_at(dir.fd(), name);
  if (!st) return;
  Newness why{is_new(*st, start_), fresh};
  if (!why) return;
  std::string path = join(dir_path, name);
  if (skip_.count(path)) return;
  const std::string without = "; the repository works without it";
  if (!S_ISREG(st->st_mode)) {
    move_aside(dir, path, name, describe(dir.fd(), name, *st, name, why), without);
    return;
  }
  const std::string when = why.written ? "written during the run" : "in " + why.fresh;
  UniqueFd f(::openat(dir.fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat fst;
  if (!f || ::fstat(f.get(), &fst) != 0 || !S_ISREG(fst.st_mode)) {
    if (!f && errno == ENOENT) return;  // removed meanwhile
    std::string problem = f ? "replaced while it was checked" : "could not be read: " + errno_text(errno);
    move_aside(dir, path, name, when + "; " + problem, without);
    return;
  }
  std::string text(RepoGuard::kMaxConfigBytes + 1, '\0');
  size_t size = 0;
  while (size < text.size()) {
    ssize_t n = ::read(f.get(), text.data() + size, text.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      move_aside(dir, path, name, when + "; could not be read: " + errno_text(errno), without);
      return;
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  text.resize(size);
  f.reset();
  if (size > RepoGuard::kMaxConfigBytes) {
    move_aside(dir, path, name, when + "; larger than 1 MiB", without);
    return;
  }
  SanitizedGitConfig safe = sanitize_git_config(text);
  if (!safe.changed) return;
  std::string dropped;  // "core.fsmonitor, alias.st"
  for (size_t i = 0; i < safe.dropped.size() && i < 8; ++i)
    dropped += (i ? ", " : "") + printable(safe.dropped[i], 200);
  if (safe.dropped.size() > 8) dropped += " and " + std::to_string(safe.dropped.size() - 8) + " more";
  std::string found = when + "; ";
  if (!safe.error.empty()) {
    found += "not valid git config (" + printable(safe.error, 300) + ")";
  } else if (!dropped.empty()) {
    found += "sets " + dropped;
  } else {
    found += "laid out otherwise than git writes it (comments, spacing or quoting)";
  }
  if (safe.text.empty()) {
    move_aside(dir, path, name, std::move(found), without);
    return;
  }
  std::string rewritten =
      dropped.empty() ? "rewritten the way git writes it, with the same settings" : "rewritten without " + dropped;
  replace(dir, path, name, safe.text, fst.st_mode & 0666, std::move(found), rewritten);
}

void Neutraliser::replace(DirEditor& dir, const std::string& path, const std::string& name, const std::string& text,
                          mode_t mode, std::string found, const std::string& rewritten) {
  const std::string without = "; the repository works without it";
  std::string tmp;
  UniqueFd out;
  for (int i = 0; i < kMaxNames && !out; ++i) {
    tmp = name + ".oishell-new" + (i ? "." + std::to_string(i) : "");
    out.reset(dir.run(
        [&] { return ::openat(dir.fd(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600); }));
    if (!out && errno != EEXIST) break;
  }
  bool written = out && write_all(out.get(), text) && ::fchmod(out.get(), mode) == 0;
  if (out && !written) (void)::unlinkat(dir.fd(), tmp.c_str(), 0);
  out.reset();
  if (!written) {  // no safe text: no config at all is safe too
    move_aside(dir, path, name, std::move(found), " (the safe text could not be written)" + without);
    return;
  }
  auto moved = quarantine(dir, name);
  if (!moved) {
    (void)::unlinkat(dir.fd(), tmp.c_str(), 0);
    add(path, std::move(found),
        "could not be moved aside (" + moved.status().message() + "): do not run git here until it is removed");
    return;
  }
  std::string kept = moved->empty() ? "; the original was deleted (every quarantine name was taken)"
                                    : "; the original is kept in " + printable(*moved);
  if (dir.run([&] { return ::renameat(dir.fd(), tmp.c_str(), dir.fd(), name.c_str()); }) != 0) {
    std::string err = errno_text(errno);
    (void)::unlinkat(dir.fd(), tmp.c_str(), 0);
    add(path, std::move(found), "moved aside" + kept + " (writing the safe text failed: " + err + ")" + without);
    return;
  }
  add(path, std::move(found), rewritten + kept);
}

void Neutraliser::check_hooks(DirEditor& git, const std::string& git_path, const std::string& fresh) {
  auto st = lstat_at(git.fd(), "hooks");
  if (!st) return;
  std::string path = join(git_path, "hooks");
  if (skip_.count(path)) return;
  if (!S_ISDIR(st->st_mode)) {
    move_if_new(git, git_path, "hooks", fresh, "hooks", "git would run the hooks it leads to", "");
    return;
  }
  OpenedDir d = open_subdir(git, path, "hooks");
  if (!d.dir) return;
  // A hooks directory renamed into a trusted repository keeps its hooks' ctimes: unless it is the one recorded
  // there, every hook in it is new.
  const std::string hooks_fresh = !fresh.empty() || trusted(d.dir.fd(), path) ? fresh : kNewHooksDir;
  DirEditor hooks(d.dir.fd());
  std::vector<std::string> names;
  (void)d.dir.for_each([&](std::string_view name, unsigned char type) {
    // Git runs a hook by its exact name only: samples, and what was already moved aside, never run.
    if (type == DT_DIR || name.ends_with(".sample") || name.find(kQuarantine) != std::string_view::npos) return;
    names.emplace_back(name);
  });
  for (const auto& name : names) {
    move_if_new(hooks, path, name, hooks_fresh, "a hook", "git would run it",
                "; git runs a hook only by its exact name");
  }
}

void Neutraliser::check_worktrees(DirEditor& git, const std::string& git_path, const std::string& fresh) {
  auto st = lstat_at(git.fd(), "worktrees");
  if (!st) return;
  std::string path = join(git_path, "worktrees");
  if (skip_.count(path)) return;
  if (!S_ISDIR(st->st_mode)) {
    move_if_new(git, git_path, "worktrees", fresh, "worktrees", "git would look for linked worktrees through it",
                "");
    return;
  }
  OpenedDir d = open_subdir(git, path, "worktrees");
  if (!d.dir) return;
  DirEditor worktrees(d.dir.fd());
  std::vector<std::pair<std::string, bool>> entries;
  (void)d.dir.for_each([&](std::string_view name, unsigned char type) {
    // What was already moved aside is not taken up again (in a new git directory, everything would be).
    if (type != DT_DIR && name.find(kQuarantine) != std::string_view::npos) return;
    entries.emplace_back(name, type == DT_DIR);
  });
  for (const auto& [name, is_dir] : entries) {
    std::string wt_path = join(path, name);
    if (!is_dir) {
      move_if_new(worktrees, path, name, fresh, "an entry",
                  "git would take a linked worktree's repository through it", "");
      continue;
    }
    if (skip_.count(wt_path)) continue;
    OpenedDir w = open_subdir(worktrees, wt_path, name);
    if (!w.dir) continue;
    DirEditor wt(w.dir.fd());
    move_if_new(wt, wt_path, "commondir", fresh, "commondir",
                "the linked worktree would take its config, hooks and objects from where it points", "");
    move_if_new(wt, wt_path, "gitdir", fresh, "gitdir", "git would take it for the linked worktree's location", "");
    move_if_new(wt, wt_path, "config.worktree", fresh, "config.worktree",
                "git would read it as the worktree's config", "");
  }
}

void Neutraliser::check_dot_git_entry(DirEditor& dir, const std::string& dir_path, const std::string& name) {
  auto st = lstat_at(dir.fd(), name);
  if (!st || S_ISDIR(st->st_mode) || !is_new(*st, start_)) return;
  std::string path = join(dir_path, name);
  if (skip_.count(path)) return;
  move_aside(dir, path, name,
             describe(dir.fd(), name, *st, name, Newness{true, ""}) +
                 ": git would take the repository from where it points",
             "; git no longer finds a repository through it");
}

}  // namespace oishell::repo_guard
