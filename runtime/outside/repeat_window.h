#pragma once
// Reports of the same thing (a key: "denied keyctl keyring EPERM") at most once per window, so that a loop inside
// the sandbox cannot grow the events log without bound. The ones in between are counted, and the count rides on
// the next report of that key (or is handed back by take_held() at the end). Bounded memory: at most kMaxKeys keys
// are remembered; when full, the keys whose window has passed are dropped, and if none has, the oldest held count
// is handed back first. Thread-compatible.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace oishell {

template <typename Payload>
class RepeatWindow {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxKeys = 1024;

  explicit RepeatWindow(std::chrono::milliseconds window) : window_(window) {}

  // nullopt: suppress this one (counted; `payload` kept for a later summary). Otherwise report it, with the value
  // the number of earlier ones suppressed since the last report of `key` (0 for a first).
  std::optional<uint64_t> admit(const std::string& key, Payload payload, Clock::time_point now = Clock::now()) {
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      make_room(now);
      entries_.emplace(key, Entry{now, 0, std::move(payload)});
      return 0;
    }
    Entry& e = it->second;
    if (now - e.reported < window_) {
      ++e.held;
      e.payload = std::move(payload);
      return std::nullopt;
    }
    const uint64_t held = e.held;
    e = Entry{now, 0, std::move(payload)};
    return held;
  }

  // Every count still held, with the last payload of its key; the counts are cleared.
  std::vector<std::pair<Payload, uint64_t>> take_held() {
    std::vector<std::pair<Payload, uint64_t>> out;
    for (auto& [key, e] : entries_) {
      if (e.held == 0) continue;
      out.emplace_back(e.payload, e.held);
      e.held = 0;
    }
    return out;
  }

  // Counts handed back because their key had to be forgotten (make_room), for the caller to report.
  std::vector<std::pair<Payload, uint64_t>> take_evicted() { return std::exchange(evicted_, {}); }

 private:
  struct Entry {
    Clock::time_point reported;
    uint64_t held = 0;
    Payload payload;
  };

  void make_room(Clock::time_point now) {
    if (entries_.size() < kMaxKeys) return;
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (now - it->second.reported >= window_) {
        if (it->second.held) evicted_.emplace_back(it->second.payload, it->second.held);
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
    if (entries_.size() < kMaxKeys) return;
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.reported < oldest->second.reported) oldest = it;
    }
    if (oldest->second.held) evicted_.emplace_back(oldest->second.payload, oldest->second.held);
    entries_.erase(oldest);
  }

  std::chrono::milliseconds window_;
  std::map<std::string, Entry> entries_;
  std::vector<std::pair<Payload, uint64_t>> evicted_;
};

}  // namespace oishell
