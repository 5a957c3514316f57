// ByteQueue: FIFO order across appends, reads into write_space(), partial consumes, compaction and growth.
#include "runtime/relay/byte_queue.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace oishell::relay {
namespace {

TEST(ByteQueueTest, KeepsOrderAcrossAppendsCommitsAndPartialConsumes) {
  ByteQueue q;
  std::string expected;
  uint32_t next = 0;
  auto produce = [&](size_t n, bool through_write_space) {
    std::string chunk;
    for (size_t i = 0; i < n; ++i) chunk.push_back(static_cast<char>('a' + (next++ % 26)));
    if (through_write_space) {
      std::memcpy(q.write_space(n), chunk.data(), n);
      q.commit(n);
    } else {
      q.append(chunk);
    }
    expected += chunk;
  };
  std::string got;
  for (int round = 0; round < 200; ++round) {
    produce(static_cast<size_t>(round * 37 % 5000 + 1), round % 2 == 0);
    size_t take = q.size() / 3 + 1;
    got += q.view().substr(0, take);
    q.consume(take);
    ASSERT_EQ(q.size(), expected.size() - got.size());
  }
  got += q.view();
  q.consume(q.size());
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(q.empty());
}

TEST(ByteQueueTest, WriteSpaceGivesAtLeastWhatWasAsked) {
  ByteQueue q;
  q.append("head");
  char* p = q.write_space(1 << 20);  // grows past the initial allocation
  std::memset(p, 'x', 1 << 20);
  q.commit(1 << 20);
  EXPECT_EQ(q.size(), 4u + (1u << 20));
  EXPECT_EQ(q.view().substr(0, 5), "headx");
  q.consume(4);
  EXPECT_EQ(q.view().find_first_not_of('x'), std::string_view::npos);
}

TEST(ByteQueueTest, EmptyingResetsAndClearDropsEverything) {
  ByteQueue q;
  q.append("abc");
  q.consume(3);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.view(), "");
  q.append(std::string(100'000, 'y'));
  q.clear();
  EXPECT_TRUE(q.empty());
  q.append("z");  // usable after its storage was released
  EXPECT_EQ(q.view(), "z");
}

}  // namespace
}  // namespace oishell::relay
