#include "harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "runtime/inside/landlock.h"

namespace oishell::test {
namespace {

struct Captured {
  int status = -1;
  std::string out, err;
};

// Where a process is stuck, for a timeout's message: its state and the call it waits in (/proc/PID/stat's third
// field, wchan, and syscall: the number and arguments), and the kernel stack where the caller may read it.
std::string where_stuck(pid_t pid) {
  auto read = [pid](const char* name) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/" + name);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  };
  std::string stat = read("stat");
  const size_t close = stat.rfind(')');
  const std::string state = close == std::string::npos || close + 2 >= stat.size() ? "?" : stat.substr(close + 2, 1);
  std::string said = "state " + state + ", wchan " + read("wchan") + ", syscall " + read("syscall");
  if (std::string stack = read("stack"); !stack.empty()) said += "\n" + stack;
  return said;
}

// fork/exec argv with stdout and stderr captured; kills it after timeout_seconds.
Captured run_captured(const std::vector<std::string>& argv, int timeout_seconds) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
  // Everything the child needs is made before the fork: a test may have threads running (a server's accept loop),
  // and a child that allocates can block for ever on a lock one of them held at the fork (CI's ASan build did, in
  // a futex, 1 run in many).
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  static constexpr char kExecFailed[] = "run_captured: exec failed\n";
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {  // only async-signal-safe calls from here to the exec
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::execv(args[0], args.data());
    [[maybe_unused]] ssize_t n = ::write(2, kExecFailed, sizeof kExecFailed - 1);
    _exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Captured result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  auto deadline = ::time(nullptr) + timeout_seconds;
  while (open_fds > 0) {
    int left = static_cast<int>(deadline - ::time(nullptr));
    if (left <= 0) {
      const std::string stuck = where_stuck(pid);
      ::kill(pid, SIGKILL);
      result.err += "\n[harness: timed out after " + std::to_string(timeout_seconds) + " s; " + stuck + "]";
      break;
    }
    if (::poll(fds, 2, left * 1000) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) if (f.fd >= 0) ::close(f.fd);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
  result.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return result;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

SandboxRun run_sandboxed(const std::vector<std::string>& oishell_args, const std::vector<std::string>& command,
                         int timeout_seconds) {
  std::vector<std::string> argv = {oishell_bin(), "run"};
  argv.insert(argv.end(), oishell_args.begin(), oishell_args.end());
  argv.push_back("--ro");
  argv.push_back(std::filesystem::path(probe_bin()).parent_path().string());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  Captured c = run_captured(argv, timeout_seconds);
  return {c.status, c.out, c.err};
}

std::string probe(const std::vector<std::string>& oishell_args, const std::vector<std::string>& probe_args) {
  std::vector<std::string> command = {probe_bin()};
  command.insert(command.end(), probe_args.begin(), probe_args.end());
  SandboxRun run = run_sandboxed(oishell_args, command);
  if (run.status != 0) return "status=" + std::to_string(run.status) + ": " + run.err;
  return first_line(run.out);
}

std::string probe_on_host(const std::vector<std::string>& probe_args) {
  std::vector<std::string> argv = {probe_bin()};
  argv.insert(argv.end(), probe_args.begin(), probe_args.end());
  Captured c = run_captured(argv, 30);
  if (c.status != 0) return "status=" + std::to_string(c.status) + ": " + c.err;
  return first_line(c.out);
}

SandboxRun run_on_host(const std::vector<std::string>& command, int timeout_seconds) {
  Captured c = run_captured(command, timeout_seconds);
  return SandboxRun{c.status, std::move(c.out), std::move(c.err)};
}

BackgroundOishell start_oishell(const std::vector<std::string>& oishell_args, const std::vector<std::string>& command,
                                const std::vector<std::string>& extra_env, const std::string& cwd,
                                bool capture_stderr, bool own_group) {
  std::vector<std::string> argv = {oishell_bin(), "run"};
  argv.insert(argv.end(), oishell_args.begin(), oishell_args.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  std::vector<char*> args, envp;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  int err_pipe[2] = {-1, -1};
  if (capture_stderr && ::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
  // oishell starts as from a terminal, whatever the test runner inherited: a runner started in the background of a
  // shell without job control has SIGINT and SIGQUIT ignored, and the ignoring would pass on through exec. They are
  // blocked from before the fork until the child has reset them, so that a signal sent the moment this returns is
  // held for it rather than dropped by the inherited SIG_IGN.
  sigset_t held, saved;
  sigemptyset(&held);
  sigaddset(&held, SIGINT);
  sigaddset(&held, SIGQUIT);
  ::pthread_sigmask(SIG_BLOCK, &held, &saved);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    throw std::runtime_error("fork");
  }
  if (pid == 0) {  // only async-signal-safe calls from here to the exec
    if (own_group) ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGQUIT, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &saved, nullptr);
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::dup2(capture_stderr ? err_pipe[1] : devnull, 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(126);
    ::execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (own_group) ::setpgid(pid, pid);  // also here, so that a kill of the group right after this finds it
  BackgroundOishell started;
  started.pid = pid;
  if (capture_stderr) {
    ::close(err_pipe[1]);
    started.stderr_fd = err_pipe[0];
  }
  return started;
}

int wait_for_exit(pid_t pid, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int status = 0;
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

int shell_status(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  const std::string wanted = std::to_string(parent);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // pid (comm) state ppid ...
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state, ppid;
    rest >> state >> ppid;
    if (ppid == wanted) out.push_back(std::stoi(name));
  }
  return out;
}

std::vector<pid_t> descendants_of(pid_t root) {
  std::vector<pid_t> out = children_of(root);
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<pid_t> more = children_of(out[i]);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

EtcFile::EtcFile(mode_t mode)
    : path_("/etc/oishell-test-" + std::to_string(::getpid()) + "-" + std::to_string(mode)) {
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return;  // the test's own open of path() then says why
  (void)!::write(fd, "root only\n", 10);
  ::fchmod(fd, mode);  // exactly `mode`, whatever the umask
  ::close(fd);
}

EtcFile::~EtcFile() { ::unlink(path_.c_str()); }

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/oishell-test-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp: " + std::string(strerror(errno)));
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& relative, const std::string& content) const {
  std::filesystem::path full = std::filesystem::path(path_) / relative;
  std::filesystem::create_directories(full.parent_path());
  std::ofstream(full) << content;
  return full.string();
}

int sandbox_landlock_abi() {
  static const int abi = [] {
    auto cap = landlock_abi_cap();
    if (!cap.is_ok()) throw std::runtime_error(cap.status().message());
    return landlock_abi_in_use(landlock_abi_version(), cap->value_or(-1));
  }();
  return abi;
}

std::string landlock_or(int since, const std::string& denial, const std::string& otherwise) {
  return sandbox_landlock_abi() >= since ? denial : otherwise;
}

}  // namespace oishell::test
