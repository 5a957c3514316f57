#include "runtime/inside/init_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/startup_trace.h"
#include "base/unique_fd.h"
#include "runtime/control_protocol.h"
#include "runtime/fd_passing.h"
#include "runtime/inside/process_spawn.h"
#include "runtime/inside/pty.h"

namespace oishell {
namespace {

constexpr int kStdioCount = 3;

// argv[0] as the sandbox's PATH finds it (execvp rules: the first executable candidate; EACCES if only
// non-executable ones exist; ENOENT if none).
int resolve_program(const std::string& name, const std::vector<std::string>& env, std::string* path) {
  if (name.empty()) return ENOENT;
  if (name.find('/') != std::string::npos) {
    *path = name;
    return 0;
  }
  std::string search = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& entry : env) {
    if (entry.rfind("PATH=", 0) == 0) search = entry.substr(5);
  }
  int result = ENOENT;
  size_t start = 0;
  while (start <= search.size()) {
    size_t colon = search.find(':', start);
    std::string dir = search.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    start = colon == std::string::npos ? search.size() + 1 : colon + 1;
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::access(candidate.c_str(), X_OK) == 0) {
      *path = candidate;
      return 0;
    }
    result = EACCES;
  }
  return result;
}

class Spawner {
 public:
  explicit Spawner(int control) : control_(control) {}

  void handle_message() {
    auto message = receive_message(control_);
    if (!message.is_ok() || message->payload.empty()) _exit(0);  // supervisor gone: pid 1 exits, all die
    auto decoded = control::decode(message->payload);
    if (!decoded.is_ok()) return;
    switch (decoded->kind) {
      case control::Kind::spawn:
        spawn(*decoded, std::move(message->fds));
        break;
      case control::Kind::signal:
        if (auto it = pids_by_id_.find(decoded->id); it != pids_by_id_.end()) ::kill(-it->second, decoded->number);
        break;
      case control::Kind::spec:
      case control::Kind::joined:
      case control::Kind::fail:
      case control::Kind::listeners:
      case control::Kind::ready:
      case control::Kind::spawned:
      case control::Kind::spawn_failed:
      case control::Kind::exited:
        break;
    }
  }

  // Reaps every child that ended; reports the ones the supervisor started.
  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      auto it = ids_by_pid_.find(pid);
      if (it == ids_by_pid_.end()) continue;  // an orphan re-parented to pid 1
      control::ControlMessage m;
      m.kind = control::Kind::exited;
      m.id = it->second;
      m.number = status;
      pids_by_id_.erase(it->second);
      ids_by_pid_.erase(it);
      (void)send_message(control_, control::encode(m));
      // The supervisor reads the report before the end of the stream (one SOCK_SEQPACKET, in order); pid 1's exit
      // kills every process left in the namespace, now rather than after the supervisor's kill reaches it.
      if (m.id == ends_sandbox_id_) _exit(0);
    }
  }

 private:
  void spawn(const control::ControlMessage& request, std::vector<UniqueFd> fds) {
    trace_startup("init: spawn request");
    control::ControlMessage reply;
    reply.id = request.id;
    int err = 0;
    pid_t pid = -1;
    std::string step = "exec";
    std::optional<Pty> pty;
    if (request.argv.empty() || fds.size() < static_cast<size_t>(kStdioCount)) {
      err = EINVAL;
    } else if (struct stat st; !request.cwd.empty() && (::stat(request.cwd.c_str(), &st) != 0 ||
                                                          ::access(request.cwd.c_str(), X_OK) != 0)) {
      // Checked here because the spawn's errno would not say whether chdir or exec failed. Searchable too: a root
      // caller's read-only workspace is not id-mapped, and one only root may search is EACCES to the sandbox
      // (runtime/outside/idmapped_binds.h).
      err = errno;
      step = "cwd";
    } else if (!request.data.empty()) {
      // A terminal of the sandbox's own (runtime/inside/pty.h): its master goes back to the supervisor with the reply.
      auto terminal = decode_terminal_request(request.data);
      auto opened = terminal.is_ok() ? open_sandbox_pty(*terminal) : Result<Pty>(terminal.status());
      if (!opened.is_ok()) {
        err = opened.status().errno_value() ? opened.status().errno_value() : EINVAL;
        step = "terminal";
      } else {
        pty = std::move(opened.value());
        err = start_process(request, fds, &*terminal, pty->slave_path, &pid);
      }
    } else {
      err = start_process(request, fds, nullptr, "", &pid);
    }
    trace_startup("init: command spawned");
    if (err == 0) {
      reply.kind = control::Kind::spawned;
      reply.number = pid;
      ids_by_pid_[pid] = request.id;
      pids_by_id_[request.id] = pid;
      if (request.number == 1) ends_sandbox_id_ = request.id;
    } else {
      reply.kind = control::Kind::spawn_failed;
      reply.number = err;
      reply.step = step;
      reply.message = step == "cwd" ? request.cwd : request.argv.empty() ? "empty argv" : request.argv[0];
    }
    std::vector<int> reply_fds;
    if (err == 0 && pty) reply_fds.push_back(pty->master.get());
    (void)send_message(control_, control::encode(reply), reply_fds);
  }  // init's copy of a terminal's master closes here: the supervisor's is the only one

  // `terminal`: the process is a session leader whose controlling terminal is `slave_path`, at the fds the request
  // marks (runtime/inside/process_spawn.h makes the session before it opens them, so the first open of the slave
  // makes it the controlling terminal, with the process's group in the foreground).
  static int start_process(const control::ControlMessage& request, const std::vector<UniqueFd>& fds,
                           const TerminalRequest* terminal, const std::string& slave_path, pid_t* pid) {
    std::string path;
    if (int err = resolve_program(request.argv[0], request.env, &path); err != 0) return err;
    // Move the received fds out of the way of their targets (0..n-1) before dup2-ing them into place.
    std::vector<UniqueFd> high;
    for (const auto& fd : fds) {
      int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 64);
      if (moved < 0) return errno;
      high.emplace_back(moved);
    }
    SpawnPlan plan;
    for (size_t i = 0; i < high.size(); ++i) {
      const bool on_terminal = terminal && i < static_cast<size_t>(kStdioCount) && terminal->stdio[i];
      plan.sources.push_back(on_terminal ? -1 : high[i].get());
    }
    plan.terminal_path = slave_path.c_str();
    plan.new_session = terminal != nullptr;  // its own session (and process group), for its controlling terminal
    if (!request.cwd.empty()) plan.cwd = request.cwd.c_str();
    std::vector<char*> argv, envp;
    for (const auto& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : request.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    plan.path = path.c_str();
    plan.argv = argv.data();
    plan.envp = envp.data();
    return spawn_process(plan, pid);
  }

  int control_;
  uint64_t ends_sandbox_id_ = 0;  // the process whose end is the sandbox's (SpawnRequest::ends_sandbox); 0: none
  std::map<pid_t, uint64_t> ids_by_pid_;
  std::map<uint64_t, pid_t> pids_by_id_;
};

}  // namespace

[[noreturn]] void run_init_loop(int control_fd) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  UniqueFd sigfd(::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!sigfd) _exit(1);
  Spawner spawner(control_fd);
  for (;;) {
    pollfd fds[2] = {{control_fd, POLLIN, 0}, {sigfd.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(1);
    }
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo info;
      trace_startup("init: a child exited");
      while (::read(sigfd.get(), &info, sizeof info) > 0) {}
      spawner.reap();
      trace_startup("init: exits reported");
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) spawner.handle_message();
  }
}

}  // namespace oishell
