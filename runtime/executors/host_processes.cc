#include "runtime/executors/host_processes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/executors/language.h"
#include "runtime/sys/syscalls.h"

namespace oishell::executors {
namespace {

// Everything the child needs, built before fork (only async-signal-safe calls after it).
struct ExecPlan {
  std::string path;
  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string cwd;
};

[[noreturn]] void child_fail(int error_fd, int err) {
  ssize_t ignored = ::write(error_fd, &err, sizeof err);
  (void)ignored;
  ::_exit(127);
}

}  // namespace

Result<std::unique_ptr<HostProcesses>> HostProcesses::create(const SandboxSpec& spec, EventSink& events) {
  UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll) return Status::from_errno(errno, "epoll_create1()");
  auto host = std::unique_ptr<HostProcesses>(new HostProcesses(spec, std::move(epoll)));
  events.emit({{"event", "start"},
               {"sandbox", "none"},
               {"degradations", host->degradations_}});
  return host;
}

HostProcesses::HostProcesses(const SandboxSpec& spec, UniqueFd epoll) : spec_(spec), epoll_(std::move(epoll)) {
  degradations_.push_back(
      "no sandbox (--sandbox none): processes run on the host as the caller; only the environment, working "
      "directory and per-block wall time of the policy apply");
}

HostProcesses::~HostProcesses() { shutdown(); }

Result<Spawned> HostProcesses::spawn(const SpawnRequest& request) {
  if (shut_down_) return Status::error("spawn: the session is shut down");
  if (request.argv.empty()) return Status::error("spawn: empty argv");
  ExecPlan plan;
  plan.path = request.argv[0];
  if (plan.path.find('/') == std::string::npos) {
    plan.path = find_program(request.argv[0], spec_, /*confined=*/false);
    if (plan.path.empty()) {
      return Status::error("spawn: `" + request.argv[0] + "` not found on PATH " + sandbox_path_variable(spec_));
    }
  }
  plan.argv_storage = request.argv;
  std::vector<std::pair<std::string, std::string>> env = spec_.env;
  for (const auto& [key, value] : request.extra_env) {
    bool replaced = false;
    for (auto& entry : env) {
      if (entry.first == key) {
        entry.second = value;
        replaced = true;
      }
    }
    if (!replaced) env.emplace_back(key, value);
  }
  for (const auto& [key, value] : env) plan.env_storage.push_back(key + "=" + value);
  for (auto& s : plan.argv_storage) plan.argv.push_back(s.data());
  plan.argv.push_back(nullptr);
  for (auto& s : plan.env_storage) plan.envp.push_back(s.data());
  plan.envp.push_back(nullptr);
  plan.cwd = request.cwd.empty() ? spec_.cwd : request.cwd;

  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, status_pipe[2] = {-1, -1};
  Spawned spawned;
  UniqueFd child_in, child_out, child_err;
  if (request.stdio == SpawnRequest::Stdio::pipes) {
    if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) {
      int e = errno;
      for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
        if (fd >= 0) ::close(fd);
      return Status::from_errno(e, "pipe2()");
    }
    child_in.reset(in[0]);
    spawned.stdin_fd.reset(in[1]);
    spawned.stdout_fd.reset(out[0]);
    child_out.reset(out[1]);
    spawned.stderr_fd.reset(err[0]);
    child_err.reset(err[1]);
  }
  if (::pipe2(status_pipe, O_CLOEXEC)) return Status::from_errno(errno, "pipe2()");
  UniqueFd status_read(status_pipe[0]), status_write(status_pipe[1]);
  const int extra_count = static_cast<int>(request.extra_fds.size());
  const pid_t parent = ::getpid();

  pid_t pid = ::fork();
  if (pid < 0) return Status::from_errno(errno, "fork()");
  if (pid == 0) {
    const int efd = status_write.get();
    ::setpgid(0, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(efd, errno);
    if (::getppid() != parent) ::_exit(127);
    sigset_t all;
    sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    if (child_in.valid()) {
      if (::dup2(child_in.get(), 0) < 0 || ::dup2(child_out.get(), 1) < 0 || ::dup2(child_err.get(), 2) < 0)
        child_fail(efd, errno);
    }
    // Extra fds to 3, 4, ...: first out of the way (above every target), then into place.
    int moved[64];
    if (extra_count > 64) child_fail(efd, EMFILE);
    for (int i = 0; i < extra_count; ++i) {
      moved[i] = ::fcntl(request.extra_fds[static_cast<size_t>(i)], F_DUPFD_CLOEXEC, 3 + extra_count + 64);
      if (moved[i] < 0) child_fail(efd, errno);
    }
    for (int i = 0; i < extra_count; ++i) {
      if (::dup2(moved[i], 3 + i) < 0) child_fail(efd, errno);
    }
    // Everything else closes at exec (the status pipe stays open until then).
    if (::close_range(static_cast<unsigned>(3 + extra_count), ~0U, CLOSE_RANGE_CLOEXEC) != 0) child_fail(efd, errno);
    if (!plan.cwd.empty() && ::chdir(plan.cwd.c_str()) != 0) child_fail(efd, errno);
    ::execve(plan.path.c_str(), plan.argv.data(), plan.envp.data());
    child_fail(efd, errno);
  }
  ::setpgid(pid, pid);  // also here: a signal sent before the child ran must reach its group
  status_write.reset();
  child_in.reset();
  child_out.reset();
  child_err.reset();
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(status_read.get(), &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  if (n == sizeof child_errno) {
    int wstatus = 0;
    ::waitpid(pid, &wstatus, 0);
    return Status::from_errno(child_errno, "execve(\"" + plan.path + "\") in " + plan.cwd);
  }
  Child child;
  child.pid = pid;
  child.pidfd.reset(sys::pidfd_open(pid, 0));
  if (!child.pidfd) {
    int e = errno;
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Status::from_errno(e, "pidfd_open()");
  }
  spawned.id = next_id_++;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = spawned.id;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, child.pidfd.get(), &ev) != 0) {
    int e = errno;
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Status::from_errno(e, "epoll_ctl(ADD pidfd)");
  }
  children_.emplace(spawned.id, std::move(child));
  return spawned;
}

Status HostProcesses::signal(uint64_t id, int sig) {
  auto it = children_.find(id);
  if (it == children_.end()) return Status::error("signal: no process " + std::to_string(id));
  // The group outlives its leader while background jobs remain; ESRCH only means nobody is left.
  if (::kill(-it->second.pid, sig) != 0 && errno != ESRCH) return Status::from_errno(errno, "kill(-pgid)");
  return Status::ok();
}

std::optional<ExitInfo> HostProcesses::reap(uint64_t id, Child& child, bool block) {
  siginfo_t info{};
  int flags = WEXITED | (block ? 0 : WNOHANG);
  int rc;
  do {
    rc = ::waitid(P_PIDFD, static_cast<id_t>(child.pidfd.get()), &info, flags);
  } while (rc < 0 && errno == EINTR);
  if (rc != 0 || info.si_pid == 0) return std::nullopt;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, child.pidfd.get(), nullptr);
  child.pidfd.reset();
  child.exited = true;
  ExitInfo exit;
  exit.id = id;
  if (info.si_code == CLD_EXITED) {
    exit.exit_code = info.si_status;
  } else {
    exit.signal = info.si_status;
  }
  return exit;
}

std::optional<ExitInfo> HostProcesses::next_exit() {
  if (!kept_.empty()) {
    ExitInfo exit = kept_.front();
    kept_.erase(kept_.begin());
    return exit;
  }
  epoll_event ev{};
  int n = ::epoll_wait(epoll_.get(), &ev, 1, 0);
  if (n <= 0) return std::nullopt;
  auto it = children_.find(ev.data.u64);
  if (it == children_.end() || it->second.exited) return std::nullopt;
  return reap(it->first, it->second, false);
}

Result<ExitInfo> HostProcesses::wait(uint64_t id) {
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (it->id == id) {
      ExitInfo exit = *it;
      kept_.erase(it);
      return exit;
    }
  }
  auto it = children_.find(id);
  if (it == children_.end() || it->second.exited) return Status::error("wait: no running process " + std::to_string(id));
  auto exit = reap(id, it->second, true);
  if (!exit) return Status::from_errno(errno, "waitid(P_PIDFD)");
  return *exit;
}

void HostProcesses::answer_ask(uint64_t, relay::AskAnswer) {
  // Without a sandbox there is no relay, so no question is ever asked.
}

void HostProcesses::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& [id, child] : children_) {
    ::kill(-child.pid, SIGKILL);
    if (!child.exited) reap(id, child, true);
  }
}

}  // namespace oishell::executors
