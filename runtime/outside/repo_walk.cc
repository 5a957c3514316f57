#include "runtime/outside/repo_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <string_view>
#include <utility>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::repo_guard {

Walker::Walker(const struct timespec& start, const std::set<std::string>& skip, const TrustedDirs* trusted,
               TrustedDirs* record, std::stop_token stop)
    : start_(start), skip_(skip), record_(record), stop_(std::move(stop)) {
  if (!record_) check_.emplace(start, skip, trusted);
}

void Walker::walk_root(const std::string& root) {
  Dir dir(UniqueFd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
  if (!dir) {
    add(root, "cannot be opened: " + errno_text(errno), "not checked");
    return;
  }
  uint64_t mount = 0;
  if (read_only(dir.fd(), 0, &mount)) return;
  std::string_view base = std::string_view(root).substr(root.rfind('/') + 1);
  visit(std::move(dir), root, is_dot_git(base), 0, mount);
}

void Walker::add(const std::string& path, std::string found, std::string action) {
  if (!check_) return;  // the snapshot reports nothing
  check_->add(path, std::move(found), std::move(action));
}

void Walker::record(int fd, const std::string& path) {
  struct stat git, hooks;
  if (::fstat(fd, &git) != 0 || is_new(git, start_)) return;
  (*record_)[path] = {git.st_dev, git.st_ino};
  if (::fstatat(fd, "hooks", &hooks, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(hooks.st_mode) && !is_new(hooks, start_)) {
    (*record_)[join(path, "hooks")] = {hooks.st_dev, hooks.st_ino};
  }
}

bool Walker::read_only(int fd, uint64_t parent_mount, uint64_t* mount) {
  struct statx sx;
  *mount = 0;
  if (::statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID)) {
    *mount = sx.stx_mnt_id;
  }
  if (*mount != 0 && *mount == parent_mount) return false;  // the parent's mount, which is writable
  if (*mount != 0) {
    auto it = read_only_.find(*mount);
    if (it != read_only_.end()) return it->second;
  }
  struct statvfs vfs;
  bool ro = ::fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
  if (*mount != 0) read_only_[*mount] = ro;
  return ro;
}

OpenedDir Walker::open_subdir(DirEditor& parent, const std::string& path, const std::string& name) {
  if (check_) return check_->open_subdir(parent, path, name);
  OpenedDir d;  // the snapshot changes nothing: what it cannot open is not recorded
  d.dir = open_dir_at(parent.fd(), name);
  return d;
}

void Walker::visit(Dir listing, const std::string& path, bool dot_git, int depth, uint64_t mount) {
  if (stop_.stop_requested()) return;
  DirEditor dir(listing.fd());
  std::vector<std::string> subdirs, dot_git_entries;
  bool head = false, objects = false, refs = false, commondir = false;
  bool complete = listing.for_each([&](std::string_view name, unsigned char type) {
    head |= name == "HEAD" && type != DT_DIR;
    objects |= name == "objects";
    refs |= name == "refs";
    commondir |= name == "commondir";
    if (type == DT_DIR) {
      subdirs.emplace_back(name);
    } else if (is_dot_git(name)) {
      dot_git_entries.emplace_back(name);
    }
  });
  if (!complete) add(path, "could not be listed to its end (" + errno_text(errno) + ")", "partly checked");
  // What git accepts as a repository (setup.c: is_git_directory): HEAD, and objects and refs in it or in the
  // directory its commondir names.
  bool git_dir = dot_git || (head && (commondir || (objects && refs)));
  if (record_) {
    if (git_dir) record(dir.fd(), path);
  } else {
    if (git_dir) check_->check_git_dir(dir, path);
    for (const auto& name : dot_git_entries) check_->check_dot_git_entry(dir, path, name);
  }
  if (depth >= RepoGuard::kMaxDepth) {
    if (!subdirs.empty()) {
      add(path, "has directories more than " + std::to_string(RepoGuard::kMaxDepth) + " levels below the root",
          "not checked below this level");
    }
    return;
  }
  for (const auto& name : subdirs) {
    std::string child = join(path, name);
    if (skip_.count(child)) continue;
    OpenedDir d = open_subdir(dir, child, name);
    if (!d.dir) continue;
    uint64_t child_mount = 0;
    if (read_only(d.dir.fd(), mount, &child_mount)) continue;
    visit(std::move(d.dir), child, is_dot_git(name), depth + 1, child_mount);
  }
}

}  // namespace oishell::repo_guard
