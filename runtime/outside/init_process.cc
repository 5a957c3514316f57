#include "runtime/outside/init_process.h"

#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <string>

#include "runtime/inside/init.h"
#include "runtime/outside/host_advice.h"
#include "runtime/sys/syscalls.h"
#include "runtime/inside/userns.h"

namespace oishell {
namespace {

// Only the namespaces that must exist at clone: the user namespace init's privileges come from, the pid namespace
// it is pid 1 of, and the mount namespace. The net, ipc and uts namespaces (most of clone's cost: about 0.9 of
// 1 ms here, the net namespace alone 0.6) init unshares itself while it waits for the policy, off the supervisor's
// path (runtime/inside/init.cc).
constexpr uint64_t kNamespaces = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID;

// Init's set-up (mounts, namespaces) and the supervisor's (policy, seccomp program, cgroups) are independent, but
// the scheduler starts a child on its parent's CPU, where the two took turns (measured here: 1.3 ms of 16 lost).
// Init goes to the caller's other CPUs until it is sealed; it then takes the caller's set back (runtime/inside/init.cc).
// Best effort: with one CPU allowed, or if the kernel refuses, both simply share.
void run_beside_caller(pid_t pid, const cpu_set_t& caller) {
  const int here = ::sched_getcpu();
  if (here < 0 || CPU_COUNT(&caller) < 2 || !CPU_ISSET(here, &caller)) return;
  cpu_set_t others = caller;
  CPU_CLR(here, &others);
  (void)::sched_setaffinity(pid, sizeof others, &others);
}

const char* clone_error_hint(int err) {
  switch (err) {
    case E2BIG: return " (clone_args.cgroup is Linux 5.7's)";
    case EOPNOTSUPP: return " (the group is not a cgroup v2 domain)";
    default: return "";
  }
}

}  // namespace

Result<InitProcess> InitProcess::clone() { return clone(cgroup::OwnCgroups::read()); }

Result<InitProcess> InitProcess::clone(const cgroup::OwnCgroups& own) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return Status::from_errno(errno, "socketpair(AF_UNIX, SOCK_SEQPACKET)");
  }
  UniqueFd ours(pair[0]), theirs(pair[1]);
  // Read before clone: inside, until the maps exist, the process sees the overflow ids.
  InitArgs init_args;
  init_args.control_fd = pair[1];
  init_args.uid = ::geteuid();
  init_args.gid = ::getegid();
  init_args.restore_cpus = ::sched_getaffinity(0, sizeof init_args.cpus, &init_args.cpus) == 0;
  init_args.root_caller = init_args.uid == 0;
  uint32_t outside_id = 0;
  if (init_args.root_caller) {
    auto id = root_caller_outside_id();
    if (!id.is_ok()) return id.status();
    outside_id = *id;
  }
  // The group first, where init can be born in it; the clone falls back to the plain one if the kernel refuses.
  BirthCgroup birth = prepare_birth_cgroup(own);
  int pidfd = -1;
  clone_args args{};
  args.flags = kNamespaces | CLONE_PIDFD;
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  long pid = -1;
  bool born = false;
  if (birth.dir) {
    clone_args into = args;
    into.flags |= CLONE_INTO_CGROUP;
    into.cgroup = static_cast<uint64_t>(birth.dir.get());
    pid = sys::clone3(&into, sizeof into);
    born = pid >= 0;
    if (pid < 0) {
      const int err = errno;
      birth.why_not = Status::from_errno(err, "clone3(CLONE_INTO_CGROUP, \"" + birth.group.path() + "\")").message() +
                      clone_error_hint(err);
    }
  }
  if (pid < 0) pid = sys::clone3(&args, sizeof args);
  if (pid < 0) {
    // What enables the namespaces where a container's filter, a sysctl or AppArmor refuses them, for every caller
    // (`oishell run` clones init before anything else).
    Status failed = Status::from_errno(errno, "clone3(CLONE_NEWUSER|NEWNS|NEWPID)").with_context("namespaces");
    const std::string message = failed.message();
    return std::move(failed).with_advice(sandbox_blocked_advice(host_signals(), message));
  }
  if (pid == 0) {
    ::close(pair[0]);  // our copy of the supervisor's end: its closing is how init learns the supervisor died
    run_sandbox_init(init_args);
  }
  if (init_args.restore_cpus) run_beside_caller(static_cast<pid_t>(pid), init_args.cpus);
  InitProcess init;
  init.pid_ = static_cast<pid_t>(pid);
  init.pidfd_.reset(pidfd);
  init.control_ = std::move(ours);
  birth.dir.reset();
  // Init exists: the janitor waits for it to die before it removes the group. Should this fail, the janitor still
  // kills the group's members itself before the removal (cgroup_janitor.h).
  (void)birth.janitor.follow_init(pidfd);
  init.birth_ = std::move(birth);
  init.born_ = born;
  if (init_args.root_caller) {
    // Init waits for `spec` before it needs its ids; the maps are written first (one more write than init's own).
    OI_TRY(write_root_caller_maps(init.pid_, outside_id));
    const std::string ns = "/proc/" + std::to_string(init.pid_) + "/ns/user";
    init.userns_.reset(::open(ns.c_str(), O_RDONLY | O_CLOEXEC));
    if (!init.userns_) return Status::from_errno(errno, "open("" + ns + "")").with_context("root caller");
  }
  return init;
}

InitProcess::InitProcess(InitProcess&& other) noexcept { *this = std::move(other); }

InitProcess& InitProcess::operator=(InitProcess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = other.pid_;
    pidfd_ = std::move(other.pidfd_);
    control_ = std::move(other.control_);
    userns_ = std::move(other.userns_);
    birth_ = std::move(other.birth_);
    born_ = other.born_;
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

void InitProcess::release(pid_t* pid, UniqueFd* pidfd, UniqueFd* control, UniqueFd* userns, BirthCgroup* birth) {
  *pid = pid_;
  *birth = std::move(birth_);
  *pidfd = std::move(pidfd_);
  *control = std::move(control_);
  *userns = std::move(userns_);
  pid_ = -1;
}

}  // namespace oishell
