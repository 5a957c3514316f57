#include "runtime/executors/command.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace oishell::executors {
namespace {

constexpr size_t kCommandDrainLimit = 1 << 20;  // at the end: what is left in a pipe, not a background job's flood

Status set_pipe_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return Status::from_errno(errno, "fcntl(O_NONBLOCK)");
  return Status::ok();
}

uint64_t command_ms_since(Clock::time_point start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

}  // namespace

Command::Command(RunRequest request, Sandbox& sandbox, EventSink& events, const ExecutorOptions& options)
    : request_(std::move(request)), sandbox_(sandbox), events_(events), options_(options), started_(Clock::now()) {
  wall_time_ = shorter_wall_time(options_.wall_time, request_.timeout_ms);
  SpawnRequest spawn;
  spawn.argv = request_.argv;
  spawn.cwd = request_.cwd;
  spawn.extra_env = options_.extra_env;
  spawn.stdio = SpawnRequest::Stdio::pipes;
  auto spawned = sandbox_.spawn(spawn);
  Status ready = spawned.is_ok() ? Status::ok() : spawned.status();
  if (ready) {
    for (int fd : {spawned->stdin_fd.get(), spawned->stdout_fd.get(), spawned->stderr_fd.get()}) {
      if (Status s = set_pipe_nonblocking(fd); !s && ready) ready = s;
    }
  }
  if (!ready) {
    if (spawned.is_ok()) (void)sandbox_.signal(spawned->id, SIGKILL);  // its exit is dropped by the session
    const std::string message = "run `" + request_.argv.front() + "`: " + ready.message();
    events_.emit({{"event", "output"}, {"id", request_.id}, {"stream", "stderr"}, {"data", "oishell: " + message + "\n"}});
    finish("error", 127, message);
    return;
  }
  process_id_ = spawned->id;
  alive_ = true;
  stdin_ = std::move(spawned->stdin_fd);
  stdout_ = std::move(spawned->stdout_fd);
  stderr_ = std::move(spawned->stderr_fd);
  if (!request_.stdin_data || request_.stdin_data->empty()) stdin_.reset();  // EOF at once
  if (wall_time_) deadline_ = started_ + *wall_time_;
  write_stdin();
}

Command::~Command() {
  if (alive_) (void)sandbox_.signal(process_id_, SIGKILL);
}

void Command::interrupt() {
  if (!alive_ || stop_ != Stop::none) return;
  stop_ = Stop::interrupt;
  (void)sandbox_.signal(process_id_, SIGINT);
  kill_at_ = Clock::now() + options_.interrupt_grace;
}

void Command::shutdown() {
  if (finished_) return;
  stop_ = Stop::shutdown;
  if (alive_) (void)sandbox_.signal(process_id_, SIGKILL);
  alive_ = false;
  read_stream(stdout_, "stdout", stdout_carry_, true);
  read_stream(stderr_, "stderr", stderr_carry_, true);
  finish("killed", 137, "session shut down");
}

void Command::add_pollfds(std::vector<pollfd>& fds) const {
  if (stdin_) fds.push_back({stdin_.get(), POLLOUT, 0});
  if (stdout_) fds.push_back({stdout_.get(), POLLIN, 0});
  if (stderr_) fds.push_back({stderr_.get(), POLLIN, 0});
}

bool Command::owns_fd(int fd) const {
  return (stdin_ && fd == stdin_.get()) || (stdout_ && fd == stdout_.get()) || (stderr_ && fd == stderr_.get());
}

void Command::on_fd(int fd, short revents) {
  (void)revents;
  if (stdin_ && fd == stdin_.get()) {
    write_stdin();
  } else if (stdout_ && fd == stdout_.get()) {
    read_stream(stdout_, "stdout", stdout_carry_, false);
  } else if (stderr_ && fd == stderr_.get()) {
    read_stream(stderr_, "stderr", stderr_carry_, false);
  }
}

void Command::write_stdin() {
  while (stdin_) {
    const std::string& data = *request_.stdin_data;
    if (stdin_written_ >= data.size()) {
      stdin_.reset();  // EOF
      return;
    }
    ssize_t n = ::write(stdin_.get(), data.data() + stdin_written_, data.size() - stdin_written_);
    if (n > 0) {
      stdin_written_ += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return;
    } else {
      stdin_.reset();  // EPIPE: the process does not read its input
      return;
    }
  }
}

void Command::read_stream(UniqueFd& fd, const char* stream, Utf8Carry& carry, bool drain) {
  std::string buffer(options_.read_chunk, '\0');
  size_t total = 0;
  while (fd) {
    ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n > 0) {
      std::string data = carry.take(std::string_view(buffer.data(), static_cast<size_t>(n)));
      if (!data.empty())
        events_.emit({{"event", "output"}, {"id", request_.id}, {"stream", stream}, {"data", std::move(data)}});
      total += static_cast<size_t>(n);
      if (!drain || total >= kCommandDrainLimit) return;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n == 0 || errno != EAGAIN) {
      std::string rest = carry.flush();
      if (!rest.empty())
        events_.emit({{"event", "output"}, {"id", request_.id}, {"stream", stream}, {"data", std::move(rest)}});
      fd.reset();
      return;
    } else {
      return;
    }
  }
}

std::optional<Clock::time_point> Command::next_deadline() const {
  if (!alive_) return std::nullopt;
  if (kill_at_ && (!deadline_ || stop_ != Stop::none || *kill_at_ < *deadline_)) return kill_at_;
  return stop_ == Stop::none ? deadline_ : std::nullopt;
}

void Command::on_time(Clock::time_point now) {
  if (!alive_) return;
  if (stop_ == Stop::none && deadline_ && now >= *deadline_) {
    stop_ = Stop::timeout;  // the whole group, at once: a one-shot command has no state worth a SIGINT
    (void)sandbox_.signal(process_id_, SIGKILL);
    kill_at_.reset();
  } else if (kill_at_ && now >= *kill_at_) {
    (void)sandbox_.signal(process_id_, SIGKILL);
    kill_at_.reset();
  }
}

bool Command::on_exit(const ExitInfo& exit) {
  if (!alive_ || exit.id != process_id_) return false;
  alive_ = false;
  stdin_.reset();
  read_stream(stdout_, "stdout", stdout_carry_, true);
  read_stream(stderr_, "stderr", stderr_carry_, true);
  // Background children may hold the pipes open: what they write later is not this command's.
  stdout_.reset();
  stderr_.reset();
  const int status = exit.shell_status();
  switch (stop_) {
    case Stop::timeout:
      finish("timeout", status,
             "wall time limit " + std::to_string(wall_time_ ? wall_time_->count() : 0) + " ms");
      break;
    case Stop::interrupt:
      finish(status == 0 ? "ok" : "interrupted", status, "");
      break;
    case Stop::shutdown:
      finish("killed", status, "session shut down");
      break;
    case Stop::none:
      if (exit.signal || !exit.reason.empty()) {
        const char* name = exit.signal ? sigabbrev_np(exit.signal) : nullptr;
        finish("killed", status,
               !exit.reason.empty() ? exit.reason
                                    : "killed by signal " + std::to_string(exit.signal) +
                                          (name ? std::string(" (SIG") + name + ")" : ""));
      } else {
        finish(status == 0 ? "ok" : "error", status, "");
      }
      break;
  }
  return true;
}

void Command::finish(std::string status, int exit_code, std::string reason) {
  if (finished_) return;
  finished_ = true;
  sandbox_.check_host_integrity();
  events_.emit(done_event(request_.id, status, exit_code, command_ms_since(started_), reason));
}

}  // namespace oishell::executors
