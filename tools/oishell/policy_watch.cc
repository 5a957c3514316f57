// See policy_watch.h.
#include "tools/oishell/policy_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace oishell::cli {

Result<std::unique_ptr<PolicyWatch>> PolicyWatch::start(const std::string& file, std::function<void()> on_change) {
  std::unique_ptr<PolicyWatch> watch(new PolicyWatch());
  size_t slash = file.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
  watch->name_ = slash == std::string::npos ? file : file.substr(slash + 1);
  if (watch->name_.empty()) return Status::error("--watch-policy: " + file + " names no file");
  watch->on_change_ = std::move(on_change);
  watch->inotify_.reset(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (!watch->inotify_) return Status::from_errno(errno, "inotify_init1");
  if (::inotify_add_watch(watch->inotify_.get(), dir.c_str(),
                          IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ATTRIB) < 0) {
    return Status::from_errno(errno, "inotify_add_watch(\"" + dir + "\")");
  }
  watch->stop_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!watch->stop_) return Status::from_errno(errno, "eventfd");
  PolicyWatch* self = watch.get();
  watch->thread_ = std::thread([self] { self->run(); });
  return watch;
}

PolicyWatch::~PolicyWatch() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stop_.get(), &one, sizeof one);
    thread_.join();
  }
}

void PolicyWatch::run() {
  alignas(inotify_event) char buffer[16 * 1024];
  bool changed = false;
  while (true) {
    pollfd fds[2] = {{stop_.get(), POLLIN, 0}, {inotify_.get(), POLLIN, 0}};
    // After a change, wait for the file to be quiet, then read it.
    int n = ::poll(fds, 2, changed ? kQuietMs : -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) return;
    if (n == 0) {
      changed = false;
      on_change_();
      continue;
    }
    ssize_t got = ::read(inotify_.get(), buffer, sizeof buffer);
    for (ssize_t at = 0; got > 0 && at < got;) {
      auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      if (event->len > 0 && name_ == event->name) changed = true;
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
}

}  // namespace oishell::cli
