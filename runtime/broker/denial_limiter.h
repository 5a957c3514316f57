#pragma once
// A cap on the broker's net.denied events: a loop inside that keeps making a refused connect would otherwise grow
// the events log without bound. At most `per_second` events in a window of one second (opened by the first event
// after the last window ended); the others are counted, and the count is reported once, when the window ends.
#include <cstdint>
#include <optional>

#include "runtime/relay/event_loop.h"

namespace oishell::broker {

class DenialLimiter {
 public:
  using Clock = relay::Clock;
  static constexpr std::chrono::milliseconds kWindow{1000};

  explicit DenialLimiter(uint32_t per_second) : per_second_(per_second) {}

  // Whether an event at `now` may be reported; when not, it is counted. A window that has ended must have been
  // closed first (take_suppressed), or its count goes into the next one's.
  [[nodiscard]] bool admit(Clock::time_point now);
  // The count of the window that `now` has passed the end of (0 when nothing was suppressed, or the window is still
  // open, or `now` is nullopt: whatever is counted, at shutdown), and that window closed.
  [[nodiscard]] uint64_t take_suppressed(std::optional<Clock::time_point> now);
  // When the open window ends; nullopt when there is none.
  std::optional<Clock::time_point> window_end() const;

 private:
  uint32_t per_second_;
  std::optional<Clock::time_point> window_start_;
  uint32_t admitted_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace oishell::broker
