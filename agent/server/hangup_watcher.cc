#include "agent/server/hangup_watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace oishell::agent::server {

HangupWatcher::HangupWatcher(int fd, std::function<void()> on_hangup) : fd_(fd), on_hangup_(std::move(on_hangup)) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return;  // no watcher: a hang-up is then noticed at the next write
  stop_read_.reset(p[0]);
  stop_write_.reset(p[1]);
  // Signals stay with the agent's thread (Ctrl-C's handler, the reads it interrupts).
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = std::thread([this] { run(); });
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

HangupWatcher::~HangupWatcher() {
  if (!thread_.joinable()) return;
  char c = 1;
  [[maybe_unused]] ssize_t n = ::write(stop_write_.get(), &c, 1);
  thread_.join();
}

void HangupWatcher::run() {
  while (true) {
    pollfd fds[2] = {{fd_, POLLRDHUP, 0}, {stop_read_.get(), POLLIN, 0}};
    int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || fds[1].revents) return;
    if (fds[0].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) {
      fired_.store(true);
      on_hangup_();
      return;
    }
  }
}

}  // namespace oishell::agent::server
