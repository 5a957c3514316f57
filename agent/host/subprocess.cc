#include "agent/host/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>

extern char** environ;

namespace oishell::agent {
namespace {

struct Argv {
  std::vector<std::string> storage;
  std::vector<char*> ptrs;
  explicit Argv(const std::vector<std::string>& v) : storage(v) {
    for (auto& s : storage) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
  }
};

int wait_status_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// In the child after fork: only async-signal-safe calls. Reports errno over err_fd and exits 127.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, int err_fd) {
  if (std::strchr(argv[0], '/')) ::execve(argv[0], argv, envp);
  else ::execvpe(argv[0], argv, envp);
  int err = errno;
  [[maybe_unused]] ssize_t n = ::write(err_fd, &err, sizeof err);
  ::_exit(127);
}

// Reads the exec-error pipe: 0 when exec succeeded (the pipe closed on exec), else the errno.
int exec_error(int fd) {
  int err = 0;
  ssize_t n;
  do n = ::read(fd, &err, sizeof err);
  while (n < 0 && errno == EINTR);
  return n == sizeof err ? err : 0;
}

}  // namespace

bool program_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    if (end > start && ::access((dirs.substr(start, end - start) + "/" + name).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

Result<PipedChild> spawn_piped(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                               bool new_process_group) {
  if (argv.empty()) return Status::error("spawn: empty argv");
  int in[2], out[2], err[2], status_pipe[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2()");
  UniqueFd in_r(in[0]), in_w(in[1]);
  if (::pipe2(out, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2()");
  UniqueFd out_r(out[0]), out_w(out[1]);
  if (::pipe2(err, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2()");
  UniqueFd err_r(err[0]), err_w(err[1]);
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2()");
  UniqueFd st_r(status_pipe[0]), st_w(status_pipe[1]);
  Argv a(argv), e(env);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return Status::from_errno(errno, "fork()");
  if (pid == 0) {
    if (new_process_group) ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    // Restore default SIGINT handling for the child (handlers are reset by exec; the mask is not).
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(in_r.get(), 0);
    ::dup2(out_w.get(), 1);
    ::dup2(err_w.get(), 2);
    exec_child(a.ptrs.data(), e.ptrs.data(), st_w.get());
  }
  st_w.reset();
  in_r.reset();
  out_w.reset();
  err_w.reset();
  if (int code = exec_error(st_r.get()); code != 0) {
    int status;
    ::waitpid(pid, &status, 0);
    return Status::from_errno(code, "execve(\"" + argv[0] + "\")");
  }
  ::fcntl(out_r.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err_r.get(), F_SETFL, O_NONBLOCK);
  PipedChild child;
  child.pid = pid;
  child.stdin_fd = std::move(in_w);
  child.stdout_fd = std::move(out_r);
  child.stderr_fd = std::move(err_r);
  return child;
}

Result<Captured> run_capture(const std::vector<std::string>& argv, int timeout_ms) {
  std::vector<std::string> env;
  for (char** p = environ; p && *p; ++p) env.emplace_back(*p);
  auto child = spawn_piped(argv, env, /*new_process_group=*/true);
  if (!child) return child.status();
  child->stdin_fd.reset();
  Captured out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool open_out = true, open_err = true;
  while (open_out || open_err) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(child->pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{open_out ? child->stdout_fd.get() : -1, POLLIN, 0},
                     {open_err ? child->stderr_fd.get() : -1, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    char buf[4096];
    if (fds[0].revents) {
      ssize_t n = ::read(child->stdout_fd.get(), buf, sizeof buf);
      if (n > 0) out.output.append(buf, static_cast<size_t>(n));
      else if (n == 0 || errno != EAGAIN) open_out = false;
    }
    if (fds[1].revents) {
      ssize_t n = ::read(child->stderr_fd.get(), buf, sizeof buf);
      if (n <= 0 && (n == 0 || errno != EAGAIN)) open_err = false;
    }
  }
  int status = 0;
  while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.exit_code = wait_status_code(status);
  return out;
}

Status spawn_detached(const std::vector<std::string>& argv) {
  if (argv.empty()) return Status::error("spawn: empty argv");
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2()");
  UniqueFd st_r(status_pipe[0]), st_w(status_pipe[1]);
  Argv a(argv);
  pid_t pid = ::fork();
  if (pid < 0) return Status::from_errno(errno, "fork()");
  if (pid == 0) {
    // The middle process: starts the program in a session of its own and exits at once, so the program is
    // nobody's child here (init reaps it) and no death signal of ours reaches it.
    if (::fork() != 0) ::_exit(0);
    ::setsid();
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // exec keeps the mask (handlers it resets)
    int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) {
      ::dup2(null_fd, 0);
      ::dup2(null_fd, 1);
      ::dup2(null_fd, 2);
    }
    exec_child(a.ptrs.data(), environ, st_w.get());
  }
  st_w.reset();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (int code = exec_error(st_r.get()); code != 0) return Status::from_errno(code, "execve(\"" + argv[0] + "\")");
  return Status::ok();
}

Result<int> run_interactive(const std::vector<std::string>& argv) {
  if (argv.empty()) return Status::error("run: empty argv");
  Argv a(argv);
  int st[2];
  if (::pipe2(st, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2()");
  UniqueFd st_r(st[0]), st_w(st[1]);
  pid_t pid = ::fork();
  if (pid < 0) return Status::from_errno(errno, "fork()");
  if (pid == 0) {
    exec_child(a.ptrs.data(), environ, st_w.get());
  }
  st_w.reset();
  if (int code = exec_error(st_r.get()); code != 0) {
    int status;
    ::waitpid(pid, &status, 0);
    return Status::from_errno(code, "execve(\"" + argv[0] + "\")");
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return wait_status_code(status);
}

Status write_to_child(int fd, std::string_view data) {
  sigset_t pipe_signal, before;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &before);
  int error = 0;
  for (size_t at = 0; at < data.size();) {
    ssize_t n = ::write(fd, data.data() + at, data.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      break;
    }
    at += static_cast<size_t>(n);
  }
  const timespec now{0, 0};
  while (::sigtimedwait(&pipe_signal, nullptr, &now) == SIGPIPE) {
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (error) return Status::from_errno(error, "write to a child's pipe");
  return Status::ok();
}

}  // namespace oishell::agent
