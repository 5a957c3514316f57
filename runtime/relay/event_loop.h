#pragma once
// The relay's event loop: one epoll instance (edge-triggered registrations, each tagged with a 64-bit key), an
// eventfd to wake it from other threads, and a min-heap of deadlines keyed the same way. Single-threaded except
// wake().
#include <sys/epoll.h>

#include <chrono>
#include <cstdint>
#include <queue>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::relay {

using Clock = std::chrono::steady_clock;

class EventLoop {
 public:
  static Result<EventLoop> create();

  Status add(int fd, uint32_t events, uint64_t tag);
  Status modify(int fd, uint32_t events, uint64_t tag);
  void remove(int fd);
  // Waits up to timeout_ms (-1: forever); returns the number of events in `out` (0 on timeout or EINTR).
  Result<int> wait(int timeout_ms, epoll_event* out, int max);
  // Thread-safe: makes a wait() in progress return. The wake fd is registered under `wake_tag`.
  void wake();
  void drain_wake();
  // The epoll fd: poll() reports it readable while any registered fd has an event.
  int fd() const { return epoll_.get(); }

 private:
  EventLoop(UniqueFd epoll, UniqueFd wake) : epoll_(std::move(epoll)), wake_(std::move(wake)) {}
  UniqueFd epoll_;
  UniqueFd wake_;

 public:
  static constexpr uint64_t kWakeTag = ~uint64_t{0};
};

// Deadlines, earliest first. Entries are not removed when a deadline changes: the owner checks, when one
// expires, whether it still applies (lazy deletion).
class TimerQueue {
 public:
  void push(Clock::time_point when, uint64_t key) { heap_.push({when, key}); }
  // Milliseconds until the earliest deadline (rounded up), or -1 when there is none.
  int next_timeout_ms(Clock::time_point now) const;
  // Pops every entry due at `now` into `keys`.
  void pop_due(Clock::time_point now, std::vector<uint64_t>& keys);

 private:
  struct Entry {
    Clock::time_point when;
    uint64_t key;
    bool operator>(const Entry& o) const { return when > o.when; }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
};

}  // namespace oishell::relay
