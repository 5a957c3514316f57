#include "runtime/terminal_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace oishell {
namespace {

constexpr size_t kChunk = 16 * 1024;
constexpr size_t kMaxPendingInput = 64 * 1024;  // keys the command has not read yet; reading stops beyond it

// Modes a full-screen program may leave on, reset at the end: mouse reporting (all encodings), focus events,
// bracketed paste, application cursor keys and keypad, keyboard lock, insert mode; the cursor shown again.
// Each is harmless when it was not on.
constexpr char kResetModes[] =
    "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1004l\x1b[?2004l"
    "\x1b[?1l\x1b>\x1b[2l\x1b[4l\x1b[?25h";

// SIGWINCH arrives on whatever thread does not block it: its handler only writes to a pipe the relay polls.
std::atomic<int> g_winch_fd{-1};

void on_winch(int) {
  int saved = errno;
  int fd = g_winch_fd.load();
  if (fd >= 0) {
    char byte = 1;
    (void)!::write(fd, &byte, 1);
  }
  errno = saved;
}

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      (void)::poll(&p, 1, 1000);
      continue;
    }
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

TerminalRelay::TerminalRelay(UniqueFd master, Ends ends) : master_(std::move(master)), ends_(ends) {}

Result<std::unique_ptr<TerminalRelay>> TerminalRelay::start(UniqueFd master, Ends ends) {
  std::unique_ptr<TerminalRelay> relay(new TerminalRelay(std::move(master), ends));
  int flags = ::fcntl(relay->master_.get(), F_GETFL);
  if (flags < 0 || ::fcntl(relay->master_.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return Status::from_errno(errno, "fcntl(terminal master, O_NONBLOCK)");
  }
  relay->wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!relay->wake_) return Status::from_errno(errno, "eventfd");
  if (ends.input >= 0) {
    if (::tcgetattr(ends.input, &relay->saved_) != 0) return Status::from_errno(errno, "tcgetattr(the terminal)");
    relay->modes_fd_ = ends.input;
    relay->set_raw(true);
  }
  relay->thread_ = std::thread([r = relay.get()] { r->run(); });
  return relay;
}

TerminalRelay::~TerminalRelay() { finish(); }

void TerminalRelay::set_raw(bool raw) {
  if (modes_fd_ < 0) return;
  termios modes = saved_;
  if (raw) cfmakeraw(&modes);
  (void)::tcsetattr(modes_fd_, TCSADRAIN, &modes);
}

void TerminalRelay::wake() {
  uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
}

void TerminalRelay::pause() {
  std::unique_lock lock(mutex_);
  if (pause_depth_++ > 0) return;
  wake();
  changed_.wait(lock, [&] { return thread_paused_ || stopping_ || !thread_.joinable(); });
  set_raw(false);
  // Keys typed before the question cannot answer it.
  if (modes_fd_ >= 0) (void)::tcflush(modes_fd_, TCIFLUSH);
}

void TerminalRelay::resume() {
  std::lock_guard lock(mutex_);
  if (pause_depth_ == 0 || --pause_depth_ > 0) return;
  set_raw(true);
  wake();
  changed_.notify_all();
}

void TerminalRelay::write_out(const std::string& bytes) {
  if (!bytes.empty() && ends_.output >= 0) (void)write_all(ends_.output, bytes.data(), bytes.size());
}

bool TerminalRelay::pump_output(bool until_empty) {
  char buffer[kChunk];
  for (;;) {
    ssize_t n = ::read(master_.get(), buffer, sizeof buffer);
    if (n > 0) {
      write_out(filter_.feed(std::string_view(buffer, static_cast<size_t>(n))));
      if (!until_empty) return true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    return false;  // EIO: every slave is closed
  }
}

void TerminalRelay::run() {
  int winch[2] = {-1, -1};
  if (::pipe2(winch, O_CLOEXEC | O_NONBLOCK) == 0) {
    g_winch_fd.store(winch[1]);
    struct sigaction action {};
    action.sa_handler = on_winch;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGWINCH, &action, nullptr);
  }
  UniqueFd winch_read(winch[0]), winch_write(winch[1]);
  auto forward_size = [&] {
    winsize size{};
    int from = ends_.input >= 0 ? ends_.input : ends_.output;
    if (from >= 0 && ::ioctl(from, TIOCGWINSZ, &size) == 0) (void)::ioctl(master_.get(), TIOCSWINSZ, &size);
  };
  bool master_open = true;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (stopping_) break;
      if (pause_depth_ > 0) {
        thread_paused_ = true;
        changed_.notify_all();
        changed_.wait(lock, [&] { return pause_depth_ == 0 || stopping_; });
        thread_paused_ = false;
        continue;
      }
    }
    const bool want_input = ends_.input >= 0 && to_master_.size() < kMaxPendingInput;
    pollfd fds[4] = {{wake_.get(), POLLIN, 0},
                     {master_open ? master_.get() : -1,
                      static_cast<short>(POLLIN | (to_master_.empty() ? 0 : POLLOUT)), 0},
                     {want_input ? ends_.input : -1, POLLIN, 0},
                     {winch_read ? winch_read.get() : -1, POLLIN, 0}};
    if (::poll(fds, 4, master_open ? -1 : 100) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents & POLLIN) {
      uint64_t count;
      (void)!::read(wake_.get(), &count, sizeof count);
    }
    if (fds[3].revents & POLLIN) {
      char drain[64];
      while (::read(winch_read.get(), drain, sizeof drain) > 0) {
      }
      forward_size();
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) master_open = pump_output(false);
    if (master_open && (fds[1].revents & POLLOUT) && !to_master_.empty()) {
      ssize_t n = ::write(master_.get(), to_master_.data(), to_master_.size());
      if (n > 0) to_master_.erase(0, static_cast<size_t>(n));
    }
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buffer[kChunk];
      ssize_t n = ::read(ends_.input, buffer, sizeof buffer);
      if (n > 0) {
        to_master_.append(buffer, static_cast<size_t>(n));
        ssize_t w = ::write(master_.get(), to_master_.data(), to_master_.size());
        if (w > 0) to_master_.erase(0, static_cast<size_t>(w));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        ends_.input = -1;  // the user's terminal is gone: keep relaying output
      }
    }
  }
  g_winch_fd.store(-1);
}

void TerminalRelay::finish() {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
    stopping_ = true;
    changed_.notify_all();
  }
  wake();
  if (thread_.joinable()) thread_.join();
  // What the command wrote before it ended is in the pseudo-terminal now.
  (void)pump_output(true);
  write_out(filter_.finish());
  if (ends_.output >= 0) write_out(kResetModes);
  if (modes_fd_ >= 0) {
    (void)::tcsetattr(modes_fd_, TCSADRAIN, &saved_);
    (void)::tcflush(modes_fd_, TCIFLUSH);
  }
}

}  // namespace oishell
