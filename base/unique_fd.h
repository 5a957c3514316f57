#pragma once
// UniqueFd: the one owner of a kernel object reached through a file descriptor (files, sockets, pidfds,
// namespace fds, Landlock rulesets, seccomp notify fds). Move-only; closes on destruction; release() hands it off.
#include <unistd.h>

#include <utility>

namespace oishell {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  [[nodiscard]] int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);  // close(2) always releases the fd, even on EINTR
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace oishell
