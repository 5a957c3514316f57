#include "runtime/outside/repo_files.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE
#include <strings.h>
#include <unistd.h>

namespace oishell::repo_guard {

bool is_new(const struct stat& st, const struct timespec& start) {
  return st.st_ctim.tv_sec > start.tv_sec || (st.st_ctim.tv_sec == start.tv_sec && st.st_ctim.tv_nsec >= start.tv_nsec);
}

bool is_dot_git(std::string_view name) { return name.size() == 4 && ::strncasecmp(name.data(), ".git", 4) == 0; }

std::string join(const std::string& dir, std::string_view name) {
  return dir.ends_with('/') ? dir + std::string(name) : dir + "/" + std::string(name);
}

std::string printable(std::string_view s, size_t max) {
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

std::string octal_mode(mode_t mode) {
  char buf[8];
  ::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::optional<struct stat> lstat_at(int dirfd, const std::string& name) {
  struct stat st;
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return st;
}

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

namespace {

int chmod_fd(int fd, mode_t mode) {
  if (::fchmod(fd, mode) == 0) return 0;
  if (errno != EBADF) return -1;
  // An O_PATH fd (a directory we may not read): its /proc link names this inode, whatever its path is now.
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  return ::chmod(proc.c_str(), mode);
}

}  // namespace

ModeLift::ModeLift(int fd, mode_t bits) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & bits) == bits) return;
  if (chmod_fd(fd, (st.st_mode & 07777) | bits) != 0) return;
  fd_ = fd;
  mode_ = st.st_mode & 07777;
}

ModeLift::~ModeLift() {
  if (fd_ >= 0) (void)chmod_fd(fd_, mode_);
}

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

Dir::Dir(UniqueFd fd) {
  if (!fd) return;
  dir_.reset(::fdopendir(fd.get()));
  if (dir_) (void)fd.release();  // the stream owns it now
}

Dir open_dir_at(int parent_fd, const std::string& name) {
  return Dir(UniqueFd(::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
}

}  // namespace oishell::repo_guard
