#include "runtime/broker/denial_limiter.h"

namespace oishell::broker {

bool DenialLimiter::admit(Clock::time_point now) {
  if (!window_start_ || now - *window_start_ >= kWindow) {
    window_start_ = now;
    admitted_ = 0;
    suppressed_ = 0;
  }
  if (admitted_ < per_second_) {
    ++admitted_;
    return true;
  }
  ++suppressed_;
  return false;
}

uint64_t DenialLimiter::take_suppressed(std::optional<Clock::time_point> now) {
  if (!window_start_ || (now && *now - *window_start_ < kWindow)) return 0;
  const uint64_t count = suppressed_;
  window_start_.reset();
  admitted_ = 0;
  suppressed_ = 0;
  return count;
}

std::optional<DenialLimiter::Clock::time_point> DenialLimiter::window_end() const {
  if (!window_start_) return std::nullopt;
  return *window_start_ + kWindow;
}

}  // namespace oishell::broker
