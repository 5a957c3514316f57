// An executor's process and its blocks (runtime/executors/executor.h): start and restart, the queue, the streams,
// interrupts, deadlines and the process's end. What the driver says on the control channel is read and acted on in
// executor_control.cc.
#include "runtime/executors/executor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace oishell::executors {
namespace {

// After a block ends, what its process wrote before is at most a pipe's capacity; a background job that keeps
// writing must not keep the loop here, so draining stops after this much.
constexpr size_t kDrainLimit = 1 << 20;

// How much of the control socket one wake-up reads: a sandbox that writes to it without pause must not keep the
// loop here (poll reports the rest), and no line is held back for long (the longest takes 17 wake-ups).
constexpr size_t kControlReadBudget = 1 << 20;
// When the driver has ended: what is still queued in the socket is at most its buffer, read up to one whole line.
constexpr size_t kControlExitBudget = kMaxControlLine + (1 << 20);

Status set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return Status::from_errno(errno, "fcntl(O_NONBLOCK)");
  return Status::ok();
}

std::string exit_reason(const ExitInfo& exit) {
  if (!exit.reason.empty()) return exit.reason;
  if (exit.signal) {
    const char* name = sigabbrev_np(exit.signal);
    return "killed by signal " + std::to_string(exit.signal) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exited with status " + std::to_string(exit.exit_code);
}

uint64_t ms_since(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

std::string seconds_text(std::chrono::milliseconds ms) { return std::to_string((ms.count() + 999) / 1000) + " s"; }

// The driver's end(s) of the control channel (fd 3, and fd 4 with pipes) and ours: reports, and requests when they
// go through another fd.
struct ControlFds {
  UniqueFd reports;
  UniqueFd requests;
  std::vector<UniqueFd> theirs;
};

Result<ControlFds> make_control(ControlChannel kind) {
  ControlFds out;
  if (kind == ControlChannel::socket) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      return Status::from_errno(errno, "socketpair()");
    out.reports.reset(pair[0]);
    out.theirs.emplace_back(pair[1]);
    return out;
  }
  int requests[2], reports[2];
  if (::pipe2(requests, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2(requests)");
  UniqueFd requests_read(requests[0]);
  out.requests.reset(requests[1]);
  if (::pipe2(reports, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2(reports)");
  out.reports.reset(reports[0]);
  out.theirs.push_back(std::move(requests_read));  // fd 3
  out.theirs.emplace_back(reports[1]);             // fd 4
  // The driver opens /proc/self/fd/N, which checks the pipe's mode. In the sandbox the supervisor's uid is not the
  // driver's (root inside is an unused id outside), so the driver needs the "other" bits: read on the requests'
  // pipe, write on the reports'. Only a process that may ptrace the driver reaches its /proc/PID/fd.
  if (::fchmod(out.requests.get(), 0604) != 0) return Status::from_errno(errno, "fchmod(requests pipe, 0604)");
  if (::fchmod(out.reports.get(), 0602) != 0) return Status::from_errno(errno, "fchmod(reports pipe, 0602)");
  return out;
}

}  // namespace

std::optional<std::chrono::milliseconds> shorter_wall_time(std::optional<std::chrono::milliseconds> session,
                                                           std::optional<uint64_t> request_ms) {
  if (!request_ms) return session;
  const std::chrono::milliseconds requested(static_cast<int64_t>(std::min<uint64_t>(*request_ms, INT64_MAX / 2)));
  return session && *session < requested ? session : requested;
}

Executor::Executor(const Language& language, std::string program, std::string driver, Sandbox& sandbox,
                   EventSink& events, ExecutorOptions options)
    : language_(language),
      program_(std::move(program)),
      driver_(std::move(driver)),
      sandbox_(sandbox),
      events_(events),
      options_(options) {}

Executor::~Executor() {
  if (alive_) (void)sandbox_.signal(process_id_, SIGKILL);
}

bool Executor::has_block(const std::string& id) const {
  if (block_ && block_->request.id == id) return true;
  for (const auto& queued : queue_) {
    if (queued.id == id) return true;
  }
  return false;
}

Status Executor::start() {
  auto control = make_control(language_.control);
  if (!control) return control.status().with_context("starting the " + language_.name + " executor");
  SpawnRequest request;
  request.argv.push_back(program_);
  for (const auto& arg : language_.args) request.argv.push_back(arg == "{driver}" ? driver_ : arg);
  request.extra_env = {{"PYTHONUNBUFFERED", "1"}, {"MPLBACKEND", "Agg"}};
  request.extra_env.insert(request.extra_env.end(), options_.extra_env.begin(), options_.extra_env.end());
  request.stdio = SpawnRequest::Stdio::pipes;
  for (const auto& fd : control->theirs) request.extra_fds.push_back(fd.get());
  auto spawned = sandbox_.spawn(request);
  if (!spawned) return spawned.status().with_context("starting the " + language_.name + " executor");
  control->theirs.clear();
  spawned->stdin_fd.reset();  // a block's stdin is at EOF unless exec gives `stdin` (sent with the block)
  for (int fd : {spawned->stdout_fd.get(), spawned->stderr_fd.get(), control->reports.get()})
    OI_TRY(set_nonblocking(fd));
  if (control->requests) OI_TRY(set_nonblocking(control->requests.get()));
  process_id_ = spawned->id;
  stdout_ = std::move(spawned->stdout_fd);
  stderr_ = std::move(spawned->stderr_fd);
  control_ = std::move(control->reports);
  control_requests_ = std::move(control->requests);
  alive_ = true;
  ready_ = false;
  start_deadline_ = Clock::now() + language_.start_timeout;
  start_timed_out_ = false;
  control_oversized_ = 0;
  control_malformed_ = 0;
  if (ever_started_) {
    events_.emit({{"event", "executor_restarted"},
                  {"language", language_.name},
                  {"reason", restart_reason_.empty() ? std::string("restarted") : restart_reason_},
                  {"lost", language_.lost}});
  }
  ever_started_ = true;
  restart_reason_.clear();
  return Status::ok();
}

void Executor::submit(ExecRequest request) {
  queue_.push_back(std::move(request));
  if (!block_) start_next();
}

void Executor::start_next() {
  while (!block_ && !queue_.empty() && !shut_down_ && !dying_) {
    if (!alive_) {
      Status started = start();
      if (!started) {
        ExecRequest failed = std::move(queue_.front());
        queue_.pop_front();
        events_.emit({{"event", "output"}, {"id", failed.id}, {"stream", "stderr"},
                      {"data", "oishell: " + started.message() + "\n"}});
        events_.emit(done_event(failed.id, "error", 127, 0, started.message()));
        continue;
      }
    }
    Block block;
    block.request = std::move(queue_.front());
    queue_.pop_front();
    block.seq = ++seq_;
    block.started = Clock::now();
    if (auto wall = wall_time_of(block.request); wall && ready_) block.deadline = block.started + *wall;  // else from `R`
    block_ = std::move(block);
    send_block(*block_);
  }
}

std::optional<std::chrono::milliseconds> Executor::wall_time_of(const ExecRequest& request) const {
  return shorter_wall_time(options_.wall_time, request.timeout_ms);
}

void Executor::send_block(Block& block) {
  const auto& request = block.request;
  control_out_ += "X " + std::to_string(block.seq) + " " + std::to_string(request.code.size()) + " " +
                  (request.stdin_data ? std::to_string(request.stdin_data->size()) : std::string("-1")) + "\n";
  control_out_ += request.code;
  control_out_.push_back('\0');
  if (request.stdin_data) {
    control_out_ += *request.stdin_data;
    control_out_.push_back('\0');
  }
  flush_control();
}

void Executor::flush_control() {
  while (request_fd() >= 0 && !control_out_.empty()) {
    // A pipe cannot take MSG_NOSIGNAL: `oishell supervise`, the one user of executors, ignores SIGPIPE
    // (cmd_supervise.cc), so a driver that is gone is EPIPE there too.
    ssize_t n = control_requests_ ? ::write(control_requests_.get(), control_out_.data(), control_out_.size())
                                  : ::send(control_.get(), control_out_.data(), control_out_.size(), MSG_NOSIGNAL);
    if (n > 0) {
      control_out_.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EPIPE) {
      control_out_.clear();  // nobody reads any more (a pipe would report POLLERR at every poll); the exit follows
      return;
    } else {
      return;  // EAGAIN: POLLOUT will call again
    }
  }
}

bool Executor::interrupt(const std::string& id) {
  if (block_ && block_->request.id == id) {
    if (block_->stop == Stop::none) stop_block(Stop::interrupt);
    return true;
  }
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->id == id) {
      events_.emit(done_event(id, "interrupted", 130, 0, "interrupted before it started"));
      queue_.erase(it);
      return true;
    }
  }
  return false;
}

void Executor::stop_block(Stop why) {
  block_->stop = why;
  if (!ready_) {
    // The driver has not taken the block yet, so none of it runs; and a runtime still starting may not survive a
    // SIGINT cleanly (a JVM dies half-initialised). It is killed; the next block starts it again.
    (void)sandbox_.signal(process_id_, SIGKILL);
    return;
  }
  (void)sandbox_.signal(process_id_, SIGINT);
  block_->kill_at = Clock::now() + options_.interrupt_grace;
}

void Executor::reset() {
  if (!alive_) {
    restart_reason_ = "reset";
    Status started = start();
    if (!started) events_.emit(error_event("reset " + language_.name + ": " + started.message()));
    return;
  }
  if (block_) block_->stop = Stop::reset;
  restart_reason_ = "reset";
  (void)sandbox_.signal(process_id_, SIGKILL);
  dying_ = true;  // blocks submitted from now on wait for the new process (the old one holds the state reset drops)
}

void Executor::shutdown() {
  shut_down_ = true;
  for (const auto& queued : queue_) events_.emit(done_event(queued.id, "killed", 137, 0, "session shut down"));
  queue_.clear();
  if (block_) {
    drain_streams();
    finish("killed", 137, "session shut down");
  }
  if (alive_) (void)sandbox_.signal(process_id_, SIGKILL);
}

void Executor::add_pollfds(std::vector<pollfd>& fds) const {
  if (stdout_) fds.push_back({stdout_.get(), POLLIN, 0});
  if (stderr_) fds.push_back({stderr_.get(), POLLIN, 0});
  const short want_out = control_out_.empty() ? 0 : POLLOUT;
  if (control_requests_) {
    if (control_) fds.push_back({control_.get(), POLLIN, 0});
    if (want_out) fds.push_back({control_requests_.get(), want_out, 0});
  } else if (control_) {
    fds.push_back({control_.get(), static_cast<short>(POLLIN | want_out), 0});
  }
}

bool Executor::owns_fd(int fd) const {
  return (stdout_ && fd == stdout_.get()) || (stderr_ && fd == stderr_.get()) || (control_ && fd == control_.get()) ||
         (control_requests_ && fd == control_requests_.get());
}

void Executor::on_fd(int fd, short revents) {
  if (stdout_ && fd == stdout_.get()) {
    read_stream(fd, "stdout", stdout_carry_, false);
  } else if (stderr_ && fd == stderr_.get()) {
    read_stream(fd, "stderr", stderr_carry_, false);
  } else if (control_ && fd == control_.get()) {
    if (revents & POLLOUT) flush_control();
    if (revents & (POLLIN | POLLHUP | POLLERR)) read_control(kControlReadBudget);
  } else if (control_requests_ && fd == control_requests_.get()) {
    if (revents & (POLLOUT | POLLERR)) flush_control();
  }
}

void Executor::emit_output(const char* stream, std::string data) {
  if (data.empty()) return;
  if (block_ && options_.denials) {
    std::string& tail = block_->output_tail;
    tail.append(data.size() > kOutputTail ? std::string_view(data).substr(data.size() - kOutputTail) : data);
    if (tail.size() > 2 * kOutputTail) tail.erase(0, tail.size() - kOutputTail);
  }
  events_.emit({{"event", "output"},
                {"id", id_value(block_ ? block_->request.id : last_id_)},
                {"stream", stream},
                {"data", std::move(data)}});
}

void Executor::read_stream(int fd, const char* stream, Utf8Carry& carry, bool drain) {
  std::string buffer(options_.read_chunk, '\0');
  size_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n > 0) {
      emit_output(stream, carry.take(std::string_view(buffer.data(), static_cast<size_t>(n))));
      total += static_cast<size_t>(n);
      if (!drain || total >= kDrainLimit) return;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n == 0 || (n < 0 && errno != EAGAIN)) {  // end of stream: nobody holds the write end any more
      emit_output(stream, carry.flush());
      if (stdout_ && fd == stdout_.get()) stdout_.reset();
      if (stderr_ && fd == stderr_.get()) stderr_.reset();
      return;
    } else {
      return;  // EAGAIN
    }
  }
}

void Executor::drain_streams() {
  if (stdout_) read_stream(stdout_.get(), "stdout", stdout_carry_, true);
  if (stderr_) read_stream(stderr_.get(), "stderr", stderr_carry_, true);
}

void Executor::on_ready() {
  ready_ = true;
  start_deadline_.reset();
  // A block sent while the driver started: its wall time counts from now.
  if (!block_ || block_->deadline || block_->stop != Stop::none) return;
  if (auto wall = wall_time_of(block_->request)) block_->deadline = Clock::now() + *wall;
}

void Executor::finish(const std::string& status, int exit_code, const std::string& reason) {
  sandbox_.check_host_integrity();  // what the block left for the host to run, reported with it
  if (options_.denials) {
    for (auto& event : options_.denials->explain(block_->request.id, block_->output_tail)) events_.emit(event);
  }
  events_.emit(done_event(block_->request.id, status, exit_code, ms_since(block_->started), reason));
  last_id_ = block_->request.id;
  block_.reset();
  start_next();
}

std::optional<Clock::time_point> Executor::next_deadline() const {
  std::optional<Clock::time_point> next;
  if (alive_ && !ready_ && !start_timed_out_) next = start_deadline_;
  if (!block_) return next;
  if (block_->kill_at && (!next || *block_->kill_at < *next)) next = block_->kill_at;
  if (block_->deadline && block_->stop == Stop::none && (!next || *block_->deadline < *next)) next = block_->deadline;
  return next;
}

void Executor::on_time(Clock::time_point now) {
  if (alive_ && !ready_ && !start_timed_out_ && start_deadline_ && now >= *start_deadline_) {
    start_timed_out_ = true;  // the exit report ends its block and says why
    (void)sandbox_.signal(process_id_, SIGKILL);
  }
  if (!block_) return;
  if (block_->deadline && block_->stop == Stop::none && now >= *block_->deadline) stop_block(Stop::timeout);
  if (block_->kill_at && now >= *block_->kill_at) {
    block_->kill_at.reset();
    (void)sandbox_.signal(process_id_, SIGKILL);  // did not stop on SIGINT; the exit report ends the block
  }
}

void Executor::close_process() {
  alive_ = false;
  dying_ = false;
  ready_ = false;
  stdout_.reset();
  stderr_.reset();
  control_.reset();
  control_requests_.reset();
  start_deadline_.reset();
  std::string().swap(control_in_);
  control_skipping_ = false;
  control_out_.clear();
  emit_output("stdout", stdout_carry_.flush());
  emit_output("stderr", stderr_carry_.flush());
}

bool Executor::on_exit(const ExitInfo& exit) {
  if (!alive_ || exit.id != process_id_) return false;
  drain_streams();
  read_control(kControlExitBudget);  // a `done` the driver sent just before it ended counts
  const bool was_ready = ready_;
  close_process();
  const bool reset_requested = restart_reason_ == "reset";
  const bool interrupted_at_start = !was_ready && block_ && block_->stop == Stop::interrupt;
  std::string why = exit_reason(exit);
  if (start_timed_out_) {
    why = "the " + language_.name + " executor did not start within " + seconds_text(language_.start_timeout) +
          " and was killed";
  } else if (interrupted_at_start) {
    why = "interrupted while the " + language_.name + " executor started (it was killed)";
  }
  restart_reason_ = reset_requested ? "reset" : why;
  if (block_) {
    std::string status;
    std::string reason = why;
    switch (block_->stop) {
      case Stop::timeout:
        status = "timeout";
        reason = "wall time limit: the executor did not stop on SIGINT and was killed";
        break;
      case Stop::interrupt:
        status = "interrupted";
        if (!interrupted_at_start) reason = "the executor did not stop on SIGINT and was killed";
        break;
      case Stop::reset:
        status = "interrupted";
        reason = "reset";
        break;
      case Stop::shutdown:
        status = "killed";
        break;
      case Stop::none:
        status = exit.signal && !start_timed_out_ ? "killed" : "error";
        break;
    }
    // starts the process again when blocks are queued
    finish(status, interrupted_at_start ? 130 : exit.shell_status(), reason);
  }
  // Restart at once, so the next block finds its executor warm; not when it never came up (no crash loop).
  if (!alive_ && !shut_down_ && (was_ready || reset_requested)) {
    Status started = start();
    if (!started) events_.emit(error_event("restarting " + language_.name + ": " + started.message()));
    if (!block_) start_next();  // blocks that came while a reset's kill was under way
  } else if (!alive_ && !shut_down_) {
    events_.emit({{"event", "executor_exited"}, {"language", language_.name}, {"reason", restart_reason_},
                  {"lost", language_.lost}});
  }
  return true;
}

}  // namespace oishell::executors
