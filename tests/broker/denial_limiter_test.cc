// The cap on the broker's net.denied events (runtime/broker/denial_limiter.h).
#include "runtime/broker/denial_limiter.h"

#include <gtest/gtest.h>

namespace oishell::broker {
namespace {

using namespace std::chrono_literals;
using Clock = DenialLimiter::Clock;

TEST(DenialLimiter, AdmitsTheCapAWindowAndCountsTheRest) {
  DenialLimiter limiter(3);
  const Clock::time_point t0 = Clock::now();
  int admitted = 0;
  for (int i = 0; i < 10; ++i) admitted += limiter.admit(t0 + std::chrono::milliseconds(i)) ? 1 : 0;
  EXPECT_EQ(3, admitted);
  EXPECT_EQ(0u, limiter.take_suppressed(t0 + 999ms));  // the window is still open
  ASSERT_TRUE(limiter.window_end().has_value());
  EXPECT_EQ(t0 + 1000ms, *limiter.window_end());
  EXPECT_EQ(7u, limiter.take_suppressed(t0 + 1000ms));
  EXPECT_FALSE(limiter.window_end().has_value());
  EXPECT_EQ(0u, limiter.take_suppressed(t0 + 1000ms));  // reported once
  // The next window admits the cap again.
  EXPECT_TRUE(limiter.admit(t0 + 1500ms));
  EXPECT_TRUE(limiter.admit(t0 + 1500ms));
  EXPECT_TRUE(limiter.admit(t0 + 1500ms));
  EXPECT_FALSE(limiter.admit(t0 + 1500ms));
  EXPECT_EQ(1u, limiter.take_suppressed(std::nullopt));  // at shutdown: whatever is counted
}

TEST(DenialLimiter, NothingSuppressedNothingReported) {
  DenialLimiter limiter(3);
  const Clock::time_point t0 = Clock::now();
  EXPECT_TRUE(limiter.admit(t0));
  EXPECT_EQ(0u, limiter.take_suppressed(t0 + 2s));
  EXPECT_EQ(0u, limiter.take_suppressed(std::nullopt));
}

}  // namespace
}  // namespace oishell::broker
