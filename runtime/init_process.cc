#include "runtime/init_process.h"

#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "runtime/init.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

// Only the namespaces that must exist at clone: the user namespace init's privileges come from, the pid namespace
// it is pid 1 of, and the mount namespace. The net, ipc and uts namespaces (most of clone's cost: about 0.9 of
// 1 ms here, the net namespace alone 0.6) init unshares itself while it waits for the policy, off the supervisor's
// path (runtime/init.cc).
constexpr uint64_t kNamespaces = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID;

}  // namespace

Result<InitProcess> InitProcess::clone() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return Status::from_errno(errno, "socketpair(AF_UNIX, SOCK_SEQPACKET)");
  }
  UniqueFd ours(pair[0]), theirs(pair[1]);
  // Read before clone: inside, until the maps exist, the process sees the overflow ids.
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  int pidfd = -1;
  clone_args args{};
  args.flags = kNamespaces | CLONE_PIDFD;
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  long pid = sys::clone3(&args, sizeof args);
  if (pid < 0) {
    return Status::from_errno(errno, "clone3(CLONE_NEWUSER|NEWNS|NEWPID)")
        .with_context("namespaces");
  }
  if (pid == 0) {
    ::close(pair[0]);  // our copy of the supervisor's end: its closing is how init learns the supervisor died
    run_sandbox_init(InitArgs{pair[1], uid, gid});
  }
  InitProcess init;
  init.pid_ = static_cast<pid_t>(pid);
  init.pidfd_.reset(pidfd);
  init.control_ = std::move(ours);
  return init;
}

InitProcess::InitProcess(InitProcess&& other) noexcept { *this = std::move(other); }

InitProcess& InitProcess::operator=(InitProcess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = other.pid_;
    pidfd_ = std::move(other.pidfd_);
    control_ = std::move(other.control_);
    other.pid_ = -1;
  }
  return *this;
}

InitProcess::~InitProcess() { kill_and_reap(); }

void InitProcess::kill_and_reap() {
  if (pid_ <= 0) return;
  if (pidfd_) sys::pidfd_send_signal(pidfd_.get(), SIGKILL, nullptr, 0);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {}
  pid_ = -1;
}

void InitProcess::release(pid_t* pid, UniqueFd* pidfd, UniqueFd* control) {
  *pid = pid_;
  *pidfd = std::move(pidfd_);
  *control = std::move(control_);
  pid_ = -1;
}

}  // namespace oishell
