#pragma once
// The process behind one seccomp notification, seen from the supervisor: its memory, its fds, its cwd and root.
// Every read is followed by the notification-id check: what was read came from the thread that made the call and
// is still waiting for the answer (a pid reused in between fails the check). A thread's pidfd and fdinfo files are
// kept between its calls (CallerFiles): a thread that connects again opens nothing.
#include <sys/types.h>

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::broker {

// What is kept of one thread: its pidfd and its open /proc/TID/fdinfo files by fd.
struct ThreadFiles {
  pid_t tid = 0;
  UniqueFd pidfd;
  // 0: `pidfd` is the thread's own (PIDFD_THREAD, Linux 6.9). Otherwise the thread group whose leader's pidfd
  // serves for the thread (before 6.9): valid for `tid` only while `tid` is still in that group.
  pid_t group = 0;
  std::vector<std::pair<int, UniqueFd>> fdinfo;  // most recent last
};

// The files of the threads that called last, least recently used out. A kept pidfd is trusted only as Caller says.
//
// Before Linux 6.9 a pidfd names a thread group, not a thread, so a kept entry is the group of the thread that had
// the number then. A thread that ends and whose number a thread of another process takes would get the first
// process's fds (Caller's check proves the caller still waits, not which group the pidfd is): such an entry is
// used only after /proc/TID/status says the number is still in its group, one read per call on those kernels.
class CallerFiles {
 public:
  enum class Pidfds { detect, thread_groups };  // thread_groups: as before 6.9 (tests)
  explicit CallerFiles(Pidfds pidfds = Pidfds::detect) : pidfds_(pidfds) {}
  static constexpr size_t kThreads = 16;
  static constexpr size_t kFdinfoPerThread = 4;
  // The entry of `tid`; a new one (pidfd_open) when there is none, `fresh` is set (the kept pidfd's thread is gone)
  // or `tid` has left the thread group a kept group pidfd names.
  Result<std::shared_ptr<ThreadFiles>> get(pid_t tid, bool fresh = false);

 private:
  Pidfds pidfds_;
  std::list<std::shared_ptr<ThreadFiles>> threads_;  // most recent first
};

// The file status flags of a caller's fd (F_GETFL's) and its FD_CLOEXEC.
struct FdFlags {
  int file_flags = 0;
  bool cloexec = false;
};

class Caller {
 public:
  // `tid`: the calling thread, in the supervisor's pid namespace; `notify_fd` and `id` identify the notification.
  static Result<Caller> open(int notify_fd, uint64_t id, pid_t tid, CallerFiles& files);

  // Still waiting for its answer (the pid has not been reused).
  bool valid() const;
  // Exactly `size` bytes at `address` of the caller's memory, or an error (EFAULT for a bad pointer). Checked.
  Status read(uint64_t address, void* out, size_t size) const;
  // The NUL-terminated string at `address` (at most `max` bytes before the NUL: ENAMETOOLONG), read page by page so
  // that a string ending just before an unmapped page is read whole. Checked.
  Result<std::string> read_string(uint64_t address, size_t max) const;
  // A duplicate of the caller's fd (pidfd_getfd): the same open file description, O_CLOEXEC here. Not checked: it
  // is the caller's only once a check (read(), valid()) has passed after it, since the pidfd may be a kept one.
  Result<UniqueFd> take_fd_unchecked(int fd);
  // The flags of the caller's fd, from its fdinfo (one pread of a kept file). Not checked, and only as true as
  // the moment it was read: for flags to copy, never for a decision.
  Result<FdFlags> fd_flags(int fd);
  // The caller's working directory as a path inside its own root.
  Result<std::string> cwd() const;
  // The path of the caller's open fd `fd` (a directory for *at() calls), inside its own root. Checked.
  Result<std::string> fd_path(int fd) const;
  // The caller's root directory, O_PATH.
  Result<UniqueFd> root() const;
  pid_t tid() const { return tid_; }

 private:
  Caller(int notify_fd, uint64_t id, pid_t tid, std::shared_ptr<ThreadFiles> thread, CallerFiles& files)
      : notify_fd_(notify_fd), id_(id), tid_(tid), thread_(std::move(thread)), files_(&files) {}
  int notify_fd_;
  uint64_t id_;
  pid_t tid_;
  std::shared_ptr<ThreadFiles> thread_;
  CallerFiles* files_;
};

}  // namespace oishell::broker
