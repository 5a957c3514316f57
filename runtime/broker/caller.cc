#include "runtime/broker/caller.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
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

// A pidfd for `tid`: the thread's own, or (before 6.9, or `groups_only`) its group leader's, with *group set.
Result<UniqueFd> open_pidfd(pid_t tid, bool groups_only, pid_t* group) {
  *group = 0;
  UniqueFd pidfd;
  if (!groups_only) pidfd.reset(sys::pidfd_open(tid, PIDFD_THREAD));
  if (groups_only || (!pidfd && errno == EINVAL)) {
    pid_t tgid = thread_group_of(tid);
    if (tgid <= 0) return Status::from_errno(ESRCH, "/proc/" + std::to_string(tid) + "/status (no Tgid)");
    pidfd.reset(sys::pidfd_open(tgid, 0));
    *group = tgid;
  }
  if (!pidfd) return Status::from_errno(errno, "pidfd_open(" + std::to_string(tid) + ")");
  return pidfd;
}

}  // namespace

Result<std::shared_ptr<ThreadFiles>> CallerFiles::get(pid_t tid, bool fresh) {
  auto it = std::find_if(threads_.begin(), threads_.end(), [tid](const auto& t) { return t->tid == tid; });
  if (it != threads_.end()) {
    // A group's pidfd serves only while the number is still in that group.
    if (!fresh && (*it)->group != 0 && thread_group_of(tid) != (*it)->group) fresh = true;
    if (!fresh) {
      threads_.splice(threads_.begin(), threads_, it);
      return threads_.front();
    }
    threads_.erase(it);
  }
  pid_t group = 0;
  auto pidfd = open_pidfd(tid, pidfds_ == Pidfds::thread_groups, &group);
  if (!pidfd) return pidfd.status();
  auto thread = std::make_shared<ThreadFiles>();
  thread->tid = tid;
  thread->pidfd = std::move(*pidfd);
  thread->group = group;
  threads_.push_front(thread);
  if (threads_.size() > kThreads) threads_.pop_back();
  return thread;
}

Result<Caller> Caller::open(int notify_fd, uint64_t id, pid_t tid, CallerFiles& files) {
  auto thread = files.get(tid);
  if (!thread) return thread.status();
  return Caller(notify_fd, id, tid, std::move(*thread), files);
}

bool Caller::valid() const {
  uint64_t id = id_;
  return ::ioctl(notify_fd_, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

Status Caller::read(uint64_t address, void* out, size_t size) const {
  if (size == 0) return valid() ? Status::ok() : Status::from_errno(ENOENT, "seccomp notification (caller gone)");
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  ssize_t n = ::process_vm_readv(tid_, &local, 1, &remote, 1, 0);
  if (n < 0) return Status::from_errno(errno, "process_vm_readv");
  if (static_cast<size_t>(n) != size) return Status::from_errno(EFAULT, "process_vm_readv (short read)");
  if (!valid()) return Status::from_errno(ENOENT, "seccomp notification (caller gone)");
  return Status::ok();
}

Result<std::string> Caller::read_string(uint64_t address, size_t max) const {
  constexpr uint64_t kPage = 4096;
  std::string out;
  while (out.size() <= max) {
    const size_t chunk = static_cast<size_t>(kPage - (address % kPage));
    char buf[kPage];
    iovec local{buf, chunk};
    iovec remote{reinterpret_cast<void*>(address), chunk};
    ssize_t n = ::process_vm_readv(tid_, &local, 1, &remote, 1, 0);
    if (n <= 0) return Status::from_errno(n < 0 ? errno : EFAULT, "process_vm_readv");
    const char* end = static_cast<const char*>(std::memchr(buf, '\0', static_cast<size_t>(n)));
    out.append(buf, end ? static_cast<size_t>(end - buf) : static_cast<size_t>(n));
    if (end) {
      if (out.size() > max) break;
      if (!valid()) return Status::from_errno(ENOENT, "seccomp notification (caller gone)");
      return out;
    }
    address += static_cast<uint64_t>(n);
  }
  return Status::from_errno(ENAMETOOLONG, "a path longer than " + std::to_string(max) + " bytes");
}

Result<UniqueFd> Caller::take_fd_unchecked(int fd) {
  // A kept pidfd whose thread is gone is ESRCH (a pidfd names one thread, never a later one with its number): the
  // thread's number was reused, so a fresh pidfd is opened. Either way the pidfd is the caller's only if the
  // caller is still waiting after this (two live threads never share a number): the next check proves it.
  UniqueFd copy(sys::pidfd_getfd(thread_->pidfd.get(), fd, 0));
  if (!copy && errno == ESRCH) {
    auto fresh = files_->get(tid_, /*fresh=*/true);
    if (!fresh) return fresh.status();
    thread_ = std::move(*fresh);
    copy.reset(sys::pidfd_getfd(thread_->pidfd.get(), fd, 0));
  }
  if (!copy) return Status::from_errno(errno, "pidfd_getfd(" + std::to_string(fd) + ")");
  return copy;
}

Result<FdFlags> Caller::fd_flags(int fd) {
  auto& kept = thread_->fdinfo;
  auto it = std::find_if(kept.begin(), kept.end(), [fd](const auto& e) { return e.first == fd; });
  char buf[512];
  ssize_t n = -1;
  if (it != kept.end()) n = ::pread(it->second.get(), buf, sizeof buf - 1, 0);
  if (n <= 0) {
    // Not kept yet, or kept for a file since closed (fdinfo of a closed fd is ENOENT): open it again.
    if (it != kept.end()) kept.erase(it);
    const std::string path = proc_path(tid_, ("fdinfo/" + std::to_string(fd)).c_str());
    UniqueFd info(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!info) return Status::from_errno(errno, "open(" + path + ")");
    n = ::pread(info.get(), buf, sizeof buf - 1, 0);
    if (n <= 0) return Status::from_errno(n < 0 ? errno : ENODATA, "read(" + path + ")");
    kept.emplace_back(fd, std::move(info));
    if (kept.size() > CallerFiles::kFdinfoPerThread) kept.erase(kept.begin());
  }
  buf[n] = '\0';
  const char* flags = std::strstr(buf, "flags:");
  if (flags == nullptr) return Status::from_errno(ENODATA, "no flags in fdinfo of fd " + std::to_string(fd));
  // fdinfo's flags are the file's (F_GETFL's) with O_CLOEXEC added for a close-on-exec fd.
  const unsigned long value = std::strtoul(flags + 6, nullptr, 8);
  return FdFlags{static_cast<int>(value & ~static_cast<unsigned long>(O_CLOEXEC)), (value & O_CLOEXEC) != 0};
}

Result<std::string> Caller::cwd() const {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(proc_path(tid_, "cwd").c_str(), buf, sizeof buf);
  if (n < 0) return Status::from_errno(errno, "readlink(/proc/" + std::to_string(tid_) + "/cwd)");
  if (static_cast<size_t>(n) >= sizeof buf) return Status::from_errno(ENAMETOOLONG, "readlink(cwd)");
  if (!valid()) return Status::from_errno(ENOENT, "seccomp notification (caller gone)");
  return std::string(buf, static_cast<size_t>(n));
}

Result<std::string> Caller::fd_path(int fd) const {
  char buf[PATH_MAX];
  const std::string path = proc_path(tid_, ("fd/" + std::to_string(fd)).c_str());
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  if (n < 0) return Status::from_errno(errno, "readlink(" + path + ")");
  if (static_cast<size_t>(n) >= sizeof buf) return Status::from_errno(ENAMETOOLONG, "readlink(" + path + ")");
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
