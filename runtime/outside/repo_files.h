#pragma once
// The file operations the repository guard (repo_guard.h) inspects and neutralises with, and the small text helpers
// its report needs. Every operation works on a name inside a directory fd (never on a path resolved from a root)
// and none follows a symlink: a process still running in the sandbox can swap what is at a name, but cannot
// redirect an operation out of the directory it was opened in. Moving aside (quarantine) never replaces an entry.
#include <dirent.h>
#include <fcntl.h>  // AT_SYMLINK_NOFOLLOW
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <cerrno>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::repo_guard {

// The suffix of what was moved aside, and how many quarantine (or temporary) names are tried before giving up.
inline constexpr char kQuarantine[] = ".oishell-quarantine";
inline constexpr int kMaxNames = 100;

// Written during the run: ctime >= start (a process cannot set ctime; writing, creating, renaming or linking sets it).
bool is_new(const struct stat& st, const struct timespec& start);

// `.git` as git finds it: case-insensitively, as a case-folding file system gives it the entry.
bool is_dot_git(std::string_view name);

// `dir` + "/" + `name` ("/" + `name` when `dir` already ends in one). Only for the report and the snapshot's keys:
// no path made here is ever opened.
std::string join(const std::string& dir, std::string_view name);

// Names come from the sandbox: control bytes are shown as \xNN so that a report cannot drive the terminal; at most
// `max` bytes, then "...".
std::string printable(std::string_view s, size_t max = 4096);

// "0755": the permission bits of `mode`, for the report.
std::string octal_mode(mode_t mode);

// fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW): the entry itself, a symlink as a symlink. Nothing when it is gone.
std::optional<struct stat> lstat_at(int dirfd, const std::string& name);

// For the report: the first line of the regular file `name` in `dirfd` (its first 256 bytes; opened with
// O_NOFOLLOW|O_NONBLOCK|O_NOCTTY, so a fifo or device swapped in cannot block or take a terminal), or the target
// of a symlink; made printable, at most 200 bytes. "" for anything else or when it cannot be read. `st` is what
// lstat_at gave for it.
std::string peek(int dirfd, const std::string& name, const struct stat& st);

// Adds `bits` to the owner's permissions of the directory `fd` (which must outlive this; an O_PATH fd will do)
// when the caller owns it and lacks them, and puts the mode back when destroyed. Changes nothing otherwise.
class ModeLift {
 public:
  ModeLift(int fd, mode_t bits);
  ~ModeLift();
  ModeLift(const ModeLift&) = delete;
  ModeLift& operator=(const ModeLift&) = delete;
  bool lifted() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  mode_t mode_ = 0;
};

// Changes inside one directory `fd` (which must outlive this): a change refused with EACCES is retried once the
// owner may write there (a directory made read-only during the run must not keep what it holds from being
// neutralised); the mode is put back when this is destroyed.
class DirEditor {
 public:
  explicit DirEditor(int fd) : fd_(fd) {}
  int fd() const { return fd_; }
  // Runs `op` (a *at call on fd(), returning < 0 with errno set on failure), and again after lifting the mode
  // when it failed with EACCES. errno is that of the last attempt (EACCES when the mode could not be lifted).
  template <typename Op>
  int run(Op op) {
    int r = op();
    if (r < 0 && errno == EACCES && !lift_) {
      lift_ = std::make_unique<ModeLift>(fd_, S_IWUSR | S_IXUSR);
      if (lift_->lifted()) return op();
      errno = EACCES;
    }
    return r;
  }

 private:
  int fd_;
  std::unique_ptr<ModeLift> lift_;
};

// Moves `name` aside, inside the same directory, to `<name>.oishell-quarantine`, `.2`, ... (kMaxNames of them),
// never over an existing entry (renameat2 RENAME_NOREPLACE, or linkat then unlinkat where the file system lacks
// it). Returns the new name, "" when `name` was deleted because every name was taken, or the failing call.
Result<std::string> quarantine(DirEditor& dir, const std::string& name);

// Writes all of `data` to `fd`, retrying on EINTR and short writes. False when a write failed or wrote nothing.
bool write_all(int fd, std::string_view data);

// A directory stream that owns its fd: readdir for the listing, fd() for the *at calls.
class Dir {
 public:
  Dir() = default;
  // Takes `fd` (a directory opened for reading); empty when `fd` is, or fdopendir fails (then `fd` is closed).
  explicit Dir(UniqueFd fd);
  explicit operator bool() const { return dir_ != nullptr; }
  int fd() const { return ::dirfd(dir_.get()); }

  // Calls f(name, d_type) for each entry but "." and ".." (once per Dir); DT_UNKNOWN is resolved with an lstat
  // relative to fd(), and an entry gone meanwhile is left out. Returns false (errno set) when the directory could
  // not be read to its end.
  template <typename F>
  bool for_each(F f) {
    for (;;) {
      errno = 0;
      dirent* e = ::readdir(dir_.get());
      if (!e) return errno == 0;
      std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st;
        if (::fstatat(fd(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
        type = static_cast<unsigned char>(IFTODT(st.st_mode));
      }
      f(name, type);
    }
  }

 private:
  std::unique_ptr<DIR, int (*)(DIR*)> dir_{nullptr, ::closedir};
};

// Opens the subdirectory `name` of `parent_fd` to list it (O_RDONLY|O_DIRECTORY|O_NOFOLLOW): never through a
// symlink (ELOOP), never a non-directory (ENOTDIR). Empty, errno set, when it cannot be opened.
Dir open_dir_at(int parent_fd, const std::string& name);

// A directory opened for listing. When it could only be read with its owner's permissions added, `lift` holds
// them (through `path_fd`, an O_PATH fd) until this is destroyed; `dir` is closed first.
struct OpenedDir {
  UniqueFd path_fd;
  std::unique_ptr<ModeLift> lift;
  Dir dir;
};

}  // namespace oishell::repo_guard
