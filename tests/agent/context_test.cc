#include "agent/core/context.h"

#include <gtest/gtest.h>

namespace oishell::agent {
namespace {

TEST(Context, EverythingFitsNothingDropped) {
  std::vector<Message> m = {Message::user("hi"), Message::assistant("hello")};
  auto t = trim_to_window("system", m, 1000, 100);
  EXPECT_EQ(0u, t.dropped);
  EXPECT_EQ(m, t.messages);
}

TEST(Context, OldestDroppedFirstNewestKept) {
  std::vector<Message> m;
  for (int i = 0; i < 50; ++i) m.push_back(Message::user("message " + std::to_string(i) + std::string(200, 'x')));
  auto t = trim_to_window("system prompt", m, 1000, 200);
  ASSERT_FALSE(t.messages.empty());
  EXPECT_GT(t.dropped, 0u);
  EXPECT_EQ(m.back(), t.messages.back());
  EXPECT_EQ(m[t.dropped], t.messages.front());  // a contiguous tail
  EXPECT_LE(t.tokens + 200, 1000u);
}

TEST(Context, OutputWithoutItsCodeIsNotFirst) {
  std::vector<Message> m = {Message::user(std::string(4000, 'a')), Message::code("python", "print(1)"),
                            Message::console(std::string(400, 'o')), Message::user("and now?")};
  auto t = trim_to_window("s", m, 200, 10);
  ASSERT_FALSE(t.messages.empty());
  EXPECT_NE("computer", t.messages.front().role);
  EXPECT_EQ("and now?", t.messages.back().content);
}

TEST(Context, HugeNewestMessageIsCutInTheMiddle) {
  std::string big = "HEAD" + std::string(100000, 'm') + "TAIL";
  auto t = trim_to_window("s", {Message::user(big)}, 1000, 100);
  ASSERT_EQ(1u, t.messages.size());
  EXPECT_TRUE(t.cut_last);
  EXPECT_EQ(0u, t.messages[0].content.rfind("HEAD", 0));
  EXPECT_TRUE(t.messages[0].content.ends_with("TAIL"));
  EXPECT_LT(t.messages[0].content.size(), 5000u);
}

TEST(Context, TokenEstimate) {
  EXPECT_EQ(0u, estimate_tokens(std::string_view()));
  EXPECT_EQ(1u, estimate_tokens(std::string_view("abcd")));
  EXPECT_EQ(250u, estimate_tokens(std::string_view(std::string(1000, 'x'))));
}

}  // namespace
}  // namespace oishell::agent
