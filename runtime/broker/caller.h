#pragma once
// The process behind one seccomp notification, seen from the supervisor: its memory, its fds, its cwd and root.
// Every read is followed by the notification-id check: what was read came from the thread that made the call and
// is still waiting for the answer (a pid reused in between fails the check). The first check after open() also
// proves the pidfd (take_fd() makes one when no read came before it).
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::broker {

class Caller {
 public:
  // `tid`: the calling thread, in the supervisor's pid namespace; `notify_fd` and `id` identify the notification.
  static Result<Caller> open(int notify_fd, uint64_t id, pid_t tid);

  // Still waiting for its answer (the pid has not been reused).
  bool valid() const;
  // Exactly `size` bytes at `address` of the caller's memory, or an error (EFAULT for a bad pointer).
  Status read(uint64_t address, void* out, size_t size) const;
  // A duplicate of the caller's fd (pidfd_getfd): the same open file description, O_CLOEXEC here.
  Result<UniqueFd> take_fd(int fd) const;
  // Whether the caller's fd has FD_CLOEXEC (from /proc/TID/fdinfo).
  Result<bool> fd_cloexec(int fd) const;
  // The caller's working directory as a path inside its own root.
  Result<std::string> cwd() const;
  // The caller's root directory, O_PATH.
  Result<UniqueFd> root() const;
  pid_t tid() const { return tid_; }

 private:
  Caller(int notify_fd, uint64_t id, pid_t tid, UniqueFd pidfd)
      : notify_fd_(notify_fd), id_(id), tid_(tid), pidfd_(std::move(pidfd)) {}
  int notify_fd_;
  uint64_t id_;
  pid_t tid_;
  UniqueFd pidfd_;
  mutable bool pidfd_proved_ = false;  // a check passed since the pidfd was opened
};

}  // namespace oishell::broker
