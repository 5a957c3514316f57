#include "runtime/broker/caller.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "runtime/sys/syscalls.h"

namespace oishell::broker {
namespace {

std::string proc_path(pid_t tid, const char* what) { return "/proc/" + std::to_string(tid) + "/" + what; }

// The thread group of `tid` (a pidfd for a thread needs Linux 6.9; before it, the leader's serves: threads
// share their fds).
pid_t thread_group_of(pid_t tid) {
  std::ifstream status(proc_path(tid, "status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Tgid:", 0) == 0) return static_cast<pid_t>(std::atoi(line.c_str() + 5));
  }
  return -1;
}

}  // namespace

Result<Caller> Caller::open(int notify_fd, uint64_t id, pid_t tid) {
  UniqueFd pidfd(sys::pidfd_open(tid, PIDFD_THREAD));
  if (!pidfd && errno == EINVAL) {
    pid_t tgid = thread_group_of(tid);
    if (tgid > 0) pidfd.reset(sys::pidfd_open(tgid, 0));
  }
  if (!pidfd) return Status::from_errno(errno, "pidfd_open(" + std::to_string(tid) + ")");
  // Not checked here: the pidfd is proved to be the caller's by the first check after it (read() or take_fd()).
  return Caller(notify_fd, id, tid, std::move(pidfd));
}

bool Caller::valid() const {
  uint64_t id = id_;
  const bool alive = ::ioctl(notify_fd_, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
  if (alive) pidfd_proved_ = true;
  return alive;
}

Status Caller::read(uint64_t address, void* out, size_t size) const {
  if (size == 0) return Status::ok();
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  ssize_t n = ::process_vm_readv(tid_, &local, 1, &remote, 1, 0);
  if (n < 0) return Status::from_errno(errno, "process_vm_readv");
  if (static_cast<size_t>(n) != size) return Status::from_errno(EFAULT, "process_vm_readv (short read)");
  if (!valid()) return Status::from_errno(ENOENT, "seccomp notification (caller gone)");
  return Status::ok();
}

Result<UniqueFd> Caller::take_fd(int fd) const {
  UniqueFd copy(sys::pidfd_getfd(pidfd_.get(), fd, 0));
  if (!copy) return Status::from_errno(errno, "pidfd_getfd(" + std::to_string(fd) + ")");
  // The caller alive after the pidfd was opened means the pidfd is the caller (its tid cannot have been reused).
  if (!pidfd_proved_ && !valid()) return Status::from_errno(ENOENT, "seccomp notification (caller gone)");
  return copy;
}

Result<bool> Caller::fd_cloexec(int fd) const {
  const std::string path = proc_path(tid_, ("fdinfo/" + std::to_string(fd)).c_str());
  UniqueFd info(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!info) return Status::from_errno(errno, "open(" + path + ")");
  char buf[512];
  ssize_t n = ::read(info.get(), buf, sizeof buf - 1);
  if (n <= 0) return Status::from_errno(n < 0 ? errno : ENODATA, "read(" + path + ")");
  buf[n] = '\0';
  const char* flags = std::strstr(buf, "flags:");
  if (flags == nullptr) return Status::from_errno(ENODATA, "no flags in " + path);
  return (std::strtoul(flags + 6, nullptr, 8) & O_CLOEXEC) != 0;
}

Result<std::string> Caller::cwd() const {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(proc_path(tid_, "cwd").c_str(), buf, sizeof buf);
  if (n < 0) return Status::from_errno(errno, "readlink(/proc/" + std::to_string(tid_) + "/cwd)");
  if (static_cast<size_t>(n) >= sizeof buf) return Status::from_errno(ENAMETOOLONG, "readlink(cwd)");
  if (!valid()) return Status::from_errno(ENOENT, "seccomp notification (caller gone)");
  return std::string(buf, static_cast<size_t>(n));
}

Result<UniqueFd> Caller::root() const {
  UniqueFd fd(::open(proc_path(tid_, "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return Status::from_errno(errno, "open(/proc/" + std::to_string(tid_) + "/root)");
  if (!valid()) return Status::from_errno(ENOENT, "seccomp notification (caller gone)");
  return fd;
}

}  // namespace oishell::broker
