#include "runtime/cgroup_janitor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <vector>

#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

std::mutex& exiting_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Janitors told "done" and not reaped yet.
std::vector<pid_t>& exiting_pids() {
  static std::vector<pid_t> pids;
  return pids;
}

[[noreturn]] void run_janitor(int done_fd, int init_pidfd, ResourceLimits* limits) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
  // Keep nothing of the supervisor's but the two fds it needs.
  ::dup2(done_fd, 3);
  ::dup2(init_pidfd, 4);
  sys::close_range(5, ~0U, 0);
  for (int fd = 0; fd < 3; ++fd) ::close(fd);
  char byte;
  ssize_t n;
  do {
    n = ::read(3, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1) _exit(0);  // "done": the supervisor cleaned up
  // The supervisor is gone; init follows it (PDEATHSIG). The cgroups can be removed once it has.
  pollfd pfd{4, POLLIN, 0};
  while (::poll(&pfd, 1, -1) < 0 && errno == EINTR) {}
  limits->teardown();
  _exit(0);
}

}  // namespace

Status CgroupJanitor::start(int init_pidfd, ResourceLimits* limits) {
  const auto mechanisms = limits->mechanisms();
  if (std::none_of(mechanisms.begin(), mechanisms.end(),
                   [](const std::string& m) { return m.find("cgroup") != std::string::npos; })) {
    return Status::ok();
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2");
  UniqueFd read_end(pipe_fds[0]);
  done_.reset(pipe_fds[1]);
  pid_t pid = ::fork();
  if (pid < 0) return Status::from_errno(errno, "fork(cgroup janitor)");
  if (pid == 0) {
    done_.reset();  // the child must not hold the write end: its closing is the signal
    run_janitor(read_end.get(), init_pidfd, limits);
  }
  pid_ = pid;
  return Status::ok();
}

void CgroupJanitor::release() {
  if (pid_ < 0) return;
  char done = 'd';
  (void)!::write(done_.get(), &done, 1);
  done_.reset();
  // The janitor exits at once, but its exit (a copy of this address space to unmap) is not worth waiting for:
  // it is reaped here if it is gone already, else by a later release() (or, after this process, by the system).
  std::lock_guard lock(exiting_mutex());
  exiting_pids().push_back(pid_);
  pid_ = -1;
  std::erase_if(exiting_pids(), [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) != 0; });
}

}  // namespace oishell
