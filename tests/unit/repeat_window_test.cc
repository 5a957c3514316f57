// RepeatWindow (runtime/outside/repeat_window.h): one report per key per window, the rest counted and never lost.
#include "runtime/outside/repeat_window.h"

#include <gtest/gtest.h>

namespace oishell {
namespace {

using namespace std::chrono_literals;
using Clock = RepeatWindow<int>::Clock;

TEST(RepeatWindow, OnePerWindowWithTheRepeatsCountedOnTheNext) {
  RepeatWindow<int> window(1000ms);
  const Clock::time_point t0{};
  EXPECT_EQ(window.admit("a", 1, t0), std::optional<uint64_t>(0));
  EXPECT_EQ(window.admit("a", 2, t0 + 10ms), std::nullopt);
  EXPECT_EQ(window.admit("a", 3, t0 + 999ms), std::nullopt);
  EXPECT_EQ(window.admit("b", 4, t0 + 999ms), std::optional<uint64_t>(0));  // another key: its own window
  EXPECT_EQ(window.admit("a", 5, t0 + 1000ms), std::optional<uint64_t>(2));
  EXPECT_EQ(window.admit("a", 6, t0 + 1500ms), std::nullopt);
  auto held = window.take_held();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0], std::make_pair(6, uint64_t{1}));  // the last payload, and how many were held
  EXPECT_TRUE(window.take_held().empty());
}

TEST(RepeatWindow, MemoryIsBoundedAndAForgottenCountIsHandedBack) {
  RepeatWindow<int> window(1000ms);
  const Clock::time_point t0{};
  ASSERT_EQ(window.admit("held", 0, t0), std::optional<uint64_t>(0));
  ASSERT_EQ(window.admit("held", 7, t0), std::nullopt);
  for (size_t i = 1; i < RepeatWindow<int>::kMaxKeys; ++i) window.admit("k" + std::to_string(i), 0, t0 + 1ms);
  EXPECT_TRUE(window.take_evicted().empty());
  // Full, and every window still open: the oldest key goes, its held count handed back.
  EXPECT_EQ(window.admit("new", 0, t0 + 2ms), std::optional<uint64_t>(0));
  auto evicted = window.take_evicted();
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0], std::make_pair(7, uint64_t{1}));
}

}  // namespace
}  // namespace oishell
