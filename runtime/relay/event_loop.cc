#include "runtime/relay/event_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

namespace oishell::relay {

Result<EventLoop> EventLoop::create() {
  UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
  if (!ep) return Status::from_errno(errno, "epoll_create1");
  UniqueFd wake(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) return Status::from_errno(errno, "eventfd");
  EventLoop loop(std::move(ep), std::move(wake));
  OI_TRY(loop.add(loop.wake_.get(), EPOLLIN, kWakeTag));
  return loop;
}

Status EventLoop::add(int fd, uint32_t events, uint64_t tag) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) return Status::from_errno(errno, "epoll_ctl(ADD)");
  return Status::ok();
}

Status EventLoop::modify(int fd, uint32_t events, uint64_t tag) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev) != 0) return Status::from_errno(errno, "epoll_ctl(MOD)");
  return Status::ok();
}

void EventLoop::remove(int fd) { epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr); }

Result<int> EventLoop::wait(int timeout_ms, epoll_event* out, int max) {
  int n = epoll_wait(epoll_.get(), out, max, timeout_ms);
  if (n < 0) {
    if (errno == EINTR) return 0;
    return Status::from_errno(errno, "epoll_wait");
  }
  return n;
}

void EventLoop::wake() {
  uint64_t one = 1;
  // EAGAIN means the counter is already non-zero: the loop wakes anyway.
  [[maybe_unused]] ssize_t n = ::write(wake_.get(), &one, sizeof one);
}

void EventLoop::drain_wake() {
  uint64_t value = 0;
  [[maybe_unused]] ssize_t n = ::read(wake_.get(), &value, sizeof value);
}

int TimerQueue::next_timeout_ms(Clock::time_point now) const {
  if (heap_.empty()) return -1;
  auto when = heap_.top().when;
  if (when <= now) return 0;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when - now).count() + 1;
  return ms > 60'000 ? 60'000 : static_cast<int>(ms);
}

void TimerQueue::pop_due(Clock::time_point now, std::vector<uint64_t>& keys) {
  while (!heap_.empty() && heap_.top().when <= now) {
    keys.push_back(heap_.top().key);
    heap_.pop();
  }
}

}  // namespace oishell::relay
