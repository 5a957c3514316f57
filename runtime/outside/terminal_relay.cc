#include "runtime/outside/terminal_relay.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace oishell {
namespace {

constexpr size_t kChunk = 16 * 1024;
constexpr size_t kBlockingWriteChunk = 512;  // after POLLOUT, when no non-blocking description could be opened

// Modes a full-screen program may leave on, reset at the end: mouse reporting (all encodings), focus events,
// bracketed paste, application cursor keys and keypad, keyboard lock, insert mode; the cursor shown again.
// Each is harmless when it was not on.
constexpr char kResetModes[] =
    "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1004l\x1b[?2004l"
    "\x1b[?1l\x1b>\x1b[2l\x1b[4l\x1b[?25h";

// SIGWINCH arrives on whatever thread does not block it: its handler only writes to a pipe the monitor polls.
std::atomic<int> g_winch_fd{-1};

void on_winch(int) {
  const int saved = errno;
  const int fd = g_winch_fd.load();
  if (fd >= 0) {
    char byte = 1;
    (void)!::write(fd, &byte, 1);
  }
  errno = saved;
}

// A description of the terminal at `fd` of its own, non-blocking: O_NONBLOCK on `fd` itself would also change the
// user's shell's (they share the open file description).
UniqueFd reopen_nonblocking(int fd, int access) {
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  return UniqueFd(::open(path.c_str(), access | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
}

Status set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return Status::from_errno(errno, "fcntl(O_NONBLOCK)");
  return Status::ok();
}

}  // namespace

TerminalRelay::TerminalRelay(UniqueFd master, Ends ends, std::function<void()> wake)
    : master_(std::move(master)), ends_(ends), wake_(std::move(wake)) {}

Result<std::unique_ptr<TerminalRelay>> TerminalRelay::start(UniqueFd master, Ends ends, std::function<void()> wake) {
  std::unique_ptr<TerminalRelay> relay(new TerminalRelay(std::move(master), ends, std::move(wake)));
  OI_TRY_CTX(set_nonblocking(relay->master_.get()), "the command's terminal");
  OI_TRY(relay->open_ends());
  if (ends.input >= 0) {
    if (::tcgetattr(ends.input, &relay->saved_) != 0) return Status::from_errno(errno, "tcgetattr(the terminal)");
    relay->modes_fd_ = ends.input;
    relay->set_raw(true);
  }
  return relay;
}

Status TerminalRelay::open_ends() {
  if (ends_.input >= 0) {
    input_ = reopen_nonblocking(ends_.input, O_RDONLY);
    in_fd_ = input_ ? input_.get() : ends_.input;  // read only after POLLIN either way
  }
  if (ends_.output >= 0) {
    output_ = reopen_nonblocking(ends_.output, O_WRONLY);
    out_fd_ = output_ ? output_.get() : ends_.output;
    output_blocking_ = !output_;
  }
  int winch[2];
  if (::pipe2(winch, O_CLOEXEC | O_NONBLOCK) != 0) return Status::from_errno(errno, "pipe2(SIGWINCH)");
  winch_read_.reset(winch[0]);
  winch_write_.reset(winch[1]);
  g_winch_fd.store(winch_write_.get());
  struct sigaction action {};
  action.sa_handler = on_winch;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (::sigaction(SIGWINCH, &action, nullptr) != 0) return Status::from_errno(errno, "sigaction(SIGWINCH)");
  return Status::ok();
}

TerminalRelay::~TerminalRelay() {
  finish();
  g_winch_fd.store(-1);
}

void TerminalRelay::set_raw(bool raw) {
  if (modes_fd_ < 0) return;
  termios modes = saved_;
  if (raw) cfmakeraw(&modes);
  (void)::tcsetattr(modes_fd_, TCSANOW, &modes);  // what was written is processed already: nothing to drain
}

void TerminalRelay::pause() {
  std::lock_guard lock(mutex_);
  if (pause_depth_++ > 0 || finished_) return;
  set_raw(false);
  if (modes_fd_ >= 0) (void)::tcflush(modes_fd_, TCIFLUSH);  // keys typed before the question cannot answer it
}

void TerminalRelay::resume() {
  {
    std::lock_guard lock(mutex_);
    if (pause_depth_ == 0 || --pause_depth_ > 0 || finished_) return;
    set_raw(true);
  }
  if (wake_) wake_();
}

void TerminalRelay::add_pollfds(std::vector<pollfd>& fds) {
  std::lock_guard lock(mutex_);
  if (pause_depth_ > 0 || finished_) {
    polled_ = 0;
    return;
  }
  short master_events = 0;
  if (master_open_ && to_output_.size() < kMaxPendingOutput) master_events |= POLLIN;
  if (master_open_ && !to_master_.empty()) master_events |= POLLOUT;
  const bool want_input = in_fd_ >= 0 && to_master_.size() < kMaxPendingInput;
  fds.push_back({master_events ? master_.get() : -1, master_events, 0});
  fds.push_back({want_input ? in_fd_ : -1, POLLIN, 0});
  fds.push_back({!to_output_.empty() ? out_fd_ : -1, POLLOUT, 0});
  fds.push_back({winch_read_.get(), POLLIN, 0});
  polled_ = 4;
}

void TerminalRelay::on_pollfds(const pollfd* fds, size_t count) {
  std::lock_guard lock(mutex_);
  if (pause_depth_ > 0 || finished_ || polled_ != 4 || count < 4) return;  // paused meanwhile: nothing is touched
  if (fds[3].revents & POLLIN) forward_window_size();
  if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) master_open_ = read_master();
  if (fds[0].revents & POLLOUT) write_master();
  if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) read_input();
  if (fds[2].revents & (POLLOUT | POLLERR | POLLHUP) || !to_output_.empty()) write_output();
}

void TerminalRelay::forward_window_size() {
  char drain[64];
  while (::read(winch_read_.get(), drain, sizeof drain) > 0) {
  }
  winsize size{};
  const int from = ends_.input >= 0 ? ends_.input : ends_.output;
  if (from >= 0 && ::ioctl(from, TIOCGWINSZ, &size) == 0) (void)::ioctl(master_.get(), TIOCSWINSZ, &size);
}

bool TerminalRelay::read_master() {
  char buffer[kChunk];
  while (to_output_.size() < kMaxPendingOutput) {
    const ssize_t n = ::read(master_.get(), buffer, sizeof buffer);
    if (n > 0) {
      std::string filtered = filter_.feed(std::string_view(buffer, static_cast<size_t>(n)));
      if (filtered.find('\x1b') != std::string::npos) escapes_forwarded_ = true;
      to_output_ += filtered;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;  // else EIO: every slave is closed
  }
  return true;
}

void TerminalRelay::write_output() {
  while (!to_output_.empty() && out_fd_ >= 0) {
    const size_t chunk = output_blocking_ ? std::min(to_output_.size(), kBlockingWriteChunk) : to_output_.size();
    const ssize_t n = ::write(out_fd_, to_output_.data(), chunk);
    if (n > 0) {
      to_output_.erase(0, static_cast<size_t>(n));
      if (output_blocking_) return;  // one small write per POLLOUT
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    to_output_.clear();  // the user's terminal is gone: nothing can be shown any more
    out_fd_ = -1;
    return;
  }
}

void TerminalRelay::read_input() {
  char buffer[4096];
  const ssize_t n = ::read(in_fd_, buffer, sizeof buffer);
  if (n > 0) {
    to_master_.append(buffer, static_cast<size_t>(n));
    write_master();
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    in_fd_ = -1;  // the user's terminal is gone: keep relaying output
  }
}

void TerminalRelay::write_master() {
  if (to_master_.empty() || !master_open_) return;
  const ssize_t n = ::write(master_.get(), to_master_.data(), to_master_.size());
  if (n > 0) to_master_.erase(0, static_cast<size_t>(n));
}

void TerminalRelay::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  // What the command wrote before it ended is in its pseudo-terminal now; the user's terminal gets it, within
  // two seconds.
  if (master_open_) (void)read_master();
  to_output_ += filter_.finish();
  if (escapes_forwarded_) to_output_ += kResetModes;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!to_output_.empty() && out_fd_ >= 0 && std::chrono::steady_clock::now() < deadline) {
    pollfd out{out_fd_, POLLOUT, 0};
    if (::poll(&out, 1, 100) < 0 && errno != EINTR) break;
    write_output();
  }
  if (modes_fd_ >= 0) {
    (void)::tcsetattr(modes_fd_, TCSANOW, &saved_);
    (void)::tcflush(modes_fd_, TCIFLUSH);  // a late terminal report, keys typed at the very end
  }
}

}  // namespace oishell
