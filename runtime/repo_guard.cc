#include "runtime/repo_guard.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>

#include "base/git_config.h"
#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell {
namespace {

constexpr char kQuarantine[] = ".oishell-quarantine";
constexpr int kMaxNames = 100;  // quarantine and temporary names tried before giving up

bool is_new(const struct stat& st, const struct timespec& start) {
  return st.st_ctim.tv_sec > start.tv_sec || (st.st_ctim.tv_sec == start.tv_sec && st.st_ctim.tv_nsec >= start.tv_nsec);
}

// `.git` as git finds it: case-insensitively, as a case-folding file system gives it the entry.
bool is_dot_git(std::string_view name) { return name.size() == 4 && ::strncasecmp(name.data(), ".git", 4) == 0; }

std::string join(const std::string& dir, std::string_view name) {
  return dir.ends_with('/') ? dir + std::string(name) : dir + "/" + std::string(name);
}

// Names come from the sandbox: control bytes are shown as \xNN so that a report cannot drive the terminal.
std::string printable(std::string_view s, size_t max = 4096) {
  std::string out;
  for (unsigned char c : s.substr(0, max)) {
    if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

std::optional<struct stat> lstat_at(int dirfd, const std::string& name) {
  struct stat st;
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return st;
}

std::string octal_mode(mode_t mode) {
  char buf[8];
  ::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The first line of a small regular file, or the target of a symlink, for the report.
std::string peek(int dirfd, const std::string& name, const struct stat& st) {
  char buf[256];
  if (S_ISLNK(st.st_mode)) {
    ssize_t n = ::readlinkat(dirfd, name.c_str(), buf, sizeof buf);
    return n > 0 ? printable(std::string_view(buf, static_cast<size_t>(n)), 200) : "";
  }
  if (!S_ISREG(st.st_mode)) return "";
  UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd) return "";
  ssize_t n;
  do n = ::read(fd.get(), buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return "";
  std::string_view text(buf, static_cast<size_t>(n));
  text = text.substr(0, text.find('\n'));
  return printable(text, 200);
}

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

int chmod_fd(int fd, mode_t mode) {
  if (::fchmod(fd, mode) == 0) return 0;
  if (errno != EBADF) return -1;
  // An O_PATH fd (a directory we may not read): its /proc link names this inode, whatever its path is now.
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  return ::chmod(proc.c_str(), mode);
}

// Adds `bits` to the owner's permissions of the directory `fd` (which must outlive this) when the caller owns it,
// and puts the mode back when destroyed.
class ModeLift {
 public:
  ModeLift(int fd, mode_t bits) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & bits) == bits) return;
    if (chmod_fd(fd, (st.st_mode & 07777) | bits) != 0) return;
    fd_ = fd;
    mode_ = st.st_mode & 07777;
  }
  ~ModeLift() {
    if (fd_ >= 0) (void)chmod_fd(fd_, mode_);
  }
  ModeLift(const ModeLift&) = delete;
  ModeLift& operator=(const ModeLift&) = delete;
  bool lifted() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  mode_t mode_ = 0;
};

// Changes inside one directory: a change refused with EACCES is retried once the owner may write there (a
// directory made read-only during the run must not keep what it holds from being neutralised).
class DirEditor {
 public:
  explicit DirEditor(int fd) : fd_(fd) {}
  int fd() const { return fd_; }
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

// Moves `name` aside to `<name>.oishell-quarantine`, `.2`, ..., never over an existing entry. Returns the new name,
// "" when it was deleted because every name was taken, or the failure.
Result<std::string> quarantine(DirEditor& dir, const std::string& name) {
  const char* from = name.c_str();
  for (int i = 1; i <= kMaxNames; ++i) {
    std::string to = name + kQuarantine + (i == 1 ? "" : "." + std::to_string(i));
    if (dir.run([&] { return ::renameat2(dir.fd(), from, dir.fd(), to.c_str(), RENAME_NOREPLACE); }) == 0) return to;
    if (errno == EEXIST) continue;
    if (errno == EINVAL) {  // no RENAME_NOREPLACE on this file system: link (which never replaces), then unlink
      if (dir.run([&] { return ::linkat(dir.fd(), from, dir.fd(), to.c_str(), 0); }) == 0) {
        if (dir.run([&] { return ::unlinkat(dir.fd(), from, 0); }) == 0) return to;
        return Status::from_errno(errno, "unlinkat(" + printable(name) + ")");
      }
      if (errno == EEXIST) continue;
    }
    return Status::from_errno(errno, "renameat2(" + printable(name) + ", " + printable(to) + ")");
  }
  if (dir.run([&] { return ::unlinkat(dir.fd(), from, 0); }) == 0) return std::string();
  return Status::from_errno(errno, "unlinkat(" + printable(name) + ")");
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// A directory stream that owns its fd: readdir for the listing, fd() for the *at calls.
class Dir {
 public:
  Dir() = default;
  explicit Dir(UniqueFd fd) {
    if (!fd) return;
    dir_.reset(::fdopendir(fd.get()));
    if (dir_) (void)fd.release();  // the stream owns it now
  }
  explicit operator bool() const { return dir_ != nullptr; }
  int fd() const { return ::dirfd(dir_.get()); }

  // Calls f(name, d_type) for each entry but "." and ".." (once per Dir); DT_UNKNOWN is resolved with an lstat.
  // Returns false (errno set) when the directory could not be read to its end.
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

// A directory opened for listing. When it could only be read with its owner's permissions added, `lift` holds
// them (through `path_fd`) until this is destroyed; `dir` is closed first.
struct OpenedDir {
  UniqueFd path_fd;
  std::unique_ptr<ModeLift> lift;
  Dir dir;
};

// What a snapshot recorded at a path: the directory there when it was taken.
struct DirId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const DirId&) const = default;
};
using TrustedDirs = std::map<std::string, DirId>;  // by path: git directories and their hooks directories

constexpr char kNewGitDir[] = "a git directory new since the start";
constexpr char kNewHooksDir[] = "a hooks directory new since the start";

// The walk over the roots, either checking (check()) or recording (the snapshot). Both go the same way: the same
// directories, bounds, skips and notion of a git directory.
class Walker {
 public:
  // Neutralises what the run wrote. `trusted`: what the snapshot recorded (nullptr: none was taken, and every
  // entry is judged by its own ctime).
  static Walker checking(const struct timespec& start, const std::set<std::string>& skip,
                         const TrustedDirs* trusted) {
    return Walker(start, skip, trusted, nullptr, {});
  }
  // Changes nothing and reports nothing: puts in `*record` each git directory older than the start, and its hooks
  // directory when that is older too. Ends early when `stop` is requested.
  static Walker recording(const struct timespec& start, const std::set<std::string>& skip, TrustedDirs* record,
                          std::stop_token stop) {
    return Walker(start, skip, nullptr, record, std::move(stop));
  }

  void walk_root(const std::string& root) {
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

  std::vector<RepoFinding> take() { return std::move(findings_); }

 private:
  Walker(const struct timespec& start, const std::set<std::string>& skip, const TrustedDirs* trusted,
         TrustedDirs* record, std::stop_token stop)
      : start_(start), skip_(skip), trusted_(trusted), record_(record), stop_(std::move(stop)) {}

  void add(const std::string& path, std::string found, std::string action) {
    if (record_) return;  // the snapshot reports nothing
    findings_.push_back({printable(path), std::move(found), std::move(action)});
  }

  // Whether the directory `fd`, found at `path`, is the one the snapshot recorded there; without a snapshot, yes.
  bool trusted(int fd, const std::string& path) const {
    if (!trusted_) return true;
    auto it = trusted_->find(path);
    struct stat st;
    return it != trusted_->end() && ::fstat(fd, &st) == 0 && it->second == DirId{st.st_dev, st.st_ino};
  }

  // The snapshot's part at a git directory. Only what is older than the start is recorded: a directory moved into
  // place (or made a git directory) before the walk got here has a newer ctime, and stays untrusted.
  void record(int fd, const std::string& path) {
    struct stat git, hooks;
    if (::fstat(fd, &git) != 0 || is_new(git, start_)) return;
    (*record_)[path] = {git.st_dev, git.st_ino};
    if (::fstatat(fd, "hooks", &hooks, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(hooks.st_mode) && !is_new(hooks, start_)) {
      (*record_)[join(path, "hooks")] = {hooks.st_dev, hooks.st_ino};
    }
  }

  // Whether the directory `fd` is on a read-only mount, asking statvfs once per mount (statx's mount id; when the
  // kernel has none, every time).
  bool read_only(int fd, uint64_t parent_mount, uint64_t* mount) {
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

  // Opens the subdirectory `name` of `parent` (at `path`) to list it, never through a symlink. One that cannot be
  // read is opened anyway when it is ours and new (the owner's permissions are added until the result dies) and is
  // reported either way; when it was neither new nor searchable, nothing can have changed inside since the start.
  OpenedDir open_subdir(DirEditor& parent, const std::string& path, const std::string& name) {
    OpenedDir d;
    d.dir = Dir(UniqueFd(::openat(parent.fd(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
    if (d.dir || record_) return d;  // the snapshot changes nothing: what it cannot open is not recorded
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

  void visit(Dir listing, const std::string& path, bool dot_git, int depth, uint64_t mount) {
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
      if (git_dir) check_git_dir(dir, path);
      for (const auto& name : dot_git_entries) check_dot_git_entry(dir, path, name);
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

  // `fresh` (here and below): "" when the directory is trusted and each entry is judged by its own ctime, else why
  // every entry counts as new (kNewGitDir).
  void check_git_dir(DirEditor& git, const std::string& path) {
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

  // Moves `name` in `dir` aside when it is new (written during the run, or `fresh`), and reports it.
  void move_if_new(DirEditor& dir, const std::string& dir_path, const std::string& name, const std::string& fresh,
                   const std::string& noun, const std::string& consequence, const std::string& after) {
    auto st = lstat_at(dir.fd(), name);
    if (!st) return;
    Newness why{is_new(*st, start_), fresh};
    if (!why) return;
    std::string path = join(dir_path, name);
    if (skip_.count(path)) return;
    move_aside(dir, path, name, describe(dir.fd(), name, *st, noun, why) + ": " + consequence, after);
  }

  void move_aside(DirEditor& dir, const std::string& path, const std::string& name, std::string found,
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

  void check_config(DirEditor& dir, const std::string& dir_path, const std::string& name, const std::string& fresh) {
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

  // Puts `text` in place of `name`: written to a new file beside it, the original moved to quarantine, the new
  // file renamed over whatever is at `name` by then.
  void replace(DirEditor& dir, const std::string& path, const std::string& name, const std::string& text, mode_t mode,
               std::string found, const std::string& rewritten) {
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

  void check_hooks(DirEditor& git, const std::string& git_path, const std::string& fresh) {
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

  // A worktrees/*/ directory git would use is a git directory of its own (HEAD and commondir), found by the walk and
  // trusted or not for itself; here it is checked as part of this one too.
  void check_worktrees(DirEditor& git, const std::string& git_path, const std::string& fresh) {
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

  // An entry named .git that is not a directory: a `gitdir:` file or a symlink leads git to a repository elsewhere.
  void check_dot_git_entry(DirEditor& dir, const std::string& dir_path, const std::string& name) {
    auto st = lstat_at(dir.fd(), name);
    if (!st || S_ISDIR(st->st_mode) || !is_new(*st, start_)) return;
    std::string path = join(dir_path, name);
    if (skip_.count(path)) return;
    move_aside(dir, path, name,
               describe(dir.fd(), name, *st, name, Newness{true, ""}) +
                   ": git would take the repository from where it points",
               "; git no longer finds a repository through it");
  }

  struct timespec start_;
  const std::set<std::string>& skip_;
  const TrustedDirs* trusted_;  // checking: the snapshot, or nullptr
  TrustedDirs* record_;         // recording: where to put it; nullptr when checking
  std::stop_token stop_;
  std::vector<RepoFinding> findings_;
  std::map<uint64_t, bool> read_only_;
};

std::string normalised(std::string path) {
  while (path.size() > 1 && path.ends_with('/')) path.pop_back();
  return path;
}

}  // namespace

struct RepoGuard::Snapshot {
  TrustedDirs trusted;  // the thread's until it is joined
  std::jthread thread;  // declared last: stopped and joined before `trusted` goes
};

RepoGuard::RepoGuard(std::vector<std::string> roots, struct timespec start, std::vector<std::string> skip)
    : start_(start) {
  for (auto& root : roots) root = normalised(std::move(root));
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  for (const auto& root : roots) {  // a root inside another is walked with it
    bool inside = std::any_of(roots_.begin(), roots_.end(),
                              [&](const std::string& outer) { return root.starts_with(join(outer, "")); });
    if (!inside) roots_.push_back(root);
  }
  for (auto& path : skip) skip_.insert(normalised(std::move(path)));
}

RepoGuard::~RepoGuard() = default;
RepoGuard::RepoGuard(RepoGuard&&) noexcept = default;
RepoGuard& RepoGuard::operator=(RepoGuard&&) noexcept = default;

struct timespec RepoGuard::start_time() {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return now;
}

void RepoGuard::snapshot_async() {
  if (snapshot_) return;
  snapshot_ = std::make_unique<Snapshot>();
  // The thread owns copies of what it reads, and writes only into the Snapshot, which stays where it is when the
  // guard is moved.
  auto walk = [roots = roots_, skip = skip_, start = start_, record = &snapshot_->trusted](std::stop_token stop) {
    Walker walker = Walker::recording(start, skip, record, std::move(stop));
    for (const auto& root : roots) walker.walk_root(root);
  };
  // Every signal blocked in the thread (it inherits the mask): signals keep going to the threads that wait for them
  // (a signalfd, a handler meant to interrupt the caller).
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  bool started = false;
  try {
    snapshot_->thread = std::jthread(walk);
    started = true;
    // Named before this returns (unless already gone), for ps and for tests that wait for it to end.
    (void)::pthread_setname_np(snapshot_->thread.native_handle(), kSnapshotThreadName);
  } catch (const std::system_error&) {
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!started) walk(std::stop_token());  // no thread to be had (EAGAIN): the same walk, on the caller's time
}

void RepoGuard::snapshot_now() {
  if (snapshot_) return;
  snapshot_ = std::make_unique<Snapshot>();
  Walker walker = Walker::recording(start_, skip_, &snapshot_->trusted, std::stop_token());
  for (const auto& root : roots_) walker.walk_root(root);
}

std::vector<RepoFinding> RepoGuard::check() {
  const TrustedDirs* trusted = nullptr;
  if (snapshot_) {
    if (snapshot_->thread.joinable()) snapshot_->thread.join();
    trusted = &snapshot_->trusted;
  }
  Walker walker = Walker::checking(start_, skip_, trusted);
  for (const auto& root : roots_) walker.walk_root(root);
  std::vector<RepoFinding> findings = walker.take();
  auto order = [](const RepoFinding& a, const RepoFinding& b) {
    return std::tie(a.path, a.found, a.action) < std::tie(b.path, b.found, b.action);
  };
  std::sort(findings.begin(), findings.end(), order);
  findings.erase(std::unique(findings.begin(), findings.end()), findings.end());
  if (findings.size() > kMaxFindings) {
    size_t more = findings.size() - (kMaxFindings - 1);
    findings.resize(kMaxFindings - 1);
    findings.push_back({roots_.empty() ? "" : roots_.front(), std::to_string(more) + " more findings",
                        "handled the same way; not listed"});
  }
  return findings;
}

}  // namespace oishell
