#include "runtime/inside/process_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/unique_fd.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

// Init is single-threaded and the parent waits while the child runs (CLONE_VFORK): one stack serves every spawn.
constexpr size_t kChildStackBytes = 64 * 1024;
alignas(64) char g_child_stack[kChildStackBytes];

struct ChildArgs {
  const SpawnPlan* plan;
  volatile int err;  // written by the child before it exits on a failed step; read by the parent after clone
};

// The child: async-signal-safe calls only, into memory it shares with init (no allocation, no handler can run).
int child_main(void* raw) {
  auto* args = static_cast<ChildArgs*>(raw);
  const SpawnPlan& plan = *args->plan;
  auto failed = [args]() -> int {
    args->err = errno;
    _exit(127);
  };
  if (plan.new_session ? ::setsid() < 0 : ::setpgid(0, 0) != 0) return failed();
  const int count = static_cast<int>(plan.sources.size());
  for (int i = 0; i < count; ++i) {
    if (plan.sources[i] >= 0) {
      if (::dup2(plan.sources[i], i) < 0) return failed();
      continue;
    }
    int fd = ::open(plan.terminal_path, O_RDWR);
    if (fd < 0) return failed();
    if (fd != i) {
      if (::dup2(fd, i) < 0) return failed();
      ::close(fd);
    }
  }
  if (sys::close_range(static_cast<unsigned>(count), ~0U, 0) != 0) return failed();
  if (plan.cwd && ::chdir(plan.cwd) != 0) return failed();
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(plan.path, plan.argv, plan.envp);
  return failed();
}

}  // namespace

Status reset_signal_dispositions() {
  UniqueFd status(::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
  if (!status) return Status::from_errno(errno, "open(\"/proc/self/status\")");
  char text[4096];
  ssize_t n = ::read(status.get(), text, sizeof text - 1);
  if (n < 0) return Status::from_errno(errno, "read(\"/proc/self/status\")");
  text[n] = '\0';
  unsigned long long changed = 0;
  for (const char* field : {"\nSigIgn:\t", "\nSigCgt:\t"}) {
    const char* at = std::strstr(text, field);
    unsigned long long mask = 0;
    if (!at || std::sscanf(at + std::strlen(field), "%llx", &mask) != 1) {
      return Status::error(std::string("/proc/self/status has no ") + (field + 1));
    }
    changed |= mask;
  }
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  for (int sig = 1; sig <= 64; ++sig) {
    if (!(changed & (1ULL << (sig - 1)))) continue;
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    if (::sigaction(sig, &defaults, nullptr) != 0 && errno != EINVAL) {  // EINVAL: glibc's own (SIGCANCEL...)
      return Status::from_errno(errno, "sigaction(" + std::to_string(sig) + ", SIG_DFL)");
    }
  }
  return Status::ok();
}

int spawn_process(const SpawnPlan& plan, pid_t* pid) {
  ChildArgs args{&plan, 0};
  const int child = ::clone(child_main, g_child_stack + kChildStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  if (child < 0) return errno;
  if (args.err != 0) {  // the child has exited (vfork: clone returns once it has)
    while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {}
    return args.err;
  }
  *pid = child;
  return 0;
}

}  // namespace oishell
