#pragma once
// What the web page is sent: the session's events, numbered, kept so that a page opened (or reloaded) late sees the
// whole session, and handed to every open event stream as they are published. Thread-safe: the agent's thread
// publishes, each stream's thread waits.
//
// Bounded: the events kept take at most `max_bytes`; the oldest are dropped first, and a page that asks for events
// older than the oldest kept is told how many it missed (first_kept()).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace oishell::agent::gui {

class EventHub {
 public:
  explicit EventHub(size_t max_bytes = 16 * 1024 * 1024) : max_bytes_(max_bytes) {}

  // Numbers the event (its "seq", from 1), stamps it ("t": milliseconds since the epoch) and keeps it.
  void publish(nlohmann::json event);

  struct Batch {
    std::vector<std::pair<uint64_t, std::string>> events;  // (seq, JSON text), in order
    uint64_t missed = 0;                                    // asked-for events no longer kept
    bool closed = false;
  };
  // The events after `after`; waits up to `timeout_ms` for one when there is none. Closed: nothing more will come.
  Batch wait_after(uint64_t after, int timeout_ms);
  // Wakes every waiter for good (the session ends).
  void close();
  uint64_t last_seq() const;

 private:
  const size_t max_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable published_;
  std::deque<std::pair<uint64_t, std::string>> events_;
  size_t bytes_ = 0;
  uint64_t next_seq_ = 1;
  bool closed_ = false;
};

}  // namespace oishell::agent::gui
