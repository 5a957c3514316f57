// Direction (the data path of one direction) on a pipe source and a socketpair destination: order of pushed and
// read bytes, the buffer budget (past kFirstRead only with a lease, given back when the buffer runs empty), and
// gating (only released bytes are written).
#include "runtime/relay/pump.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace oishell::relay {
namespace {

constexpr size_t kMiB = 1 << 20;

// A non-blocking pipe holding `bytes` bytes (a, b, c, ... repeating), as the source endpoint.
struct Source {
  Endpoint ep;
  UniqueFd write_end;
  std::string data;
};

Source make_source(size_t bytes) {
  int fds[2];
  EXPECT_EQ(0, pipe2(fds, O_CLOEXEC | O_NONBLOCK));
  Source s;
  s.ep.fd.reset(fds[0]);
  s.write_end.reset(fds[1]);
  EXPECT_GE(fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(kMiB)), static_cast<int>(bytes));  // pipe-max-size
  for (size_t i = 0; i < bytes; ++i) s.data.push_back(static_cast<char>('a' + i % 26));
  EXPECT_EQ(static_cast<ssize_t>(bytes), write(fds[1], s.data.data(), bytes));
  s.ep.readable = true;
  return s;
}

TEST(DirectionTest, WithoutALeaseHoldsOnlyTheFirstReadAndKeepsOrder) {
  Source src = make_source(kMiB);
  BufferBudget empty(0);
  Direction d;
  d.set_capacity(kMiB, &empty);
  d.push("reply:");
  bool progressed = false;
  ASSERT_TRUE(d.fill(src.ep, progressed).is_ok());
  EXPECT_TRUE(progressed);
  // It stopped for want of room (the source still has bytes), at kFirstRead, the pushed bytes included.
  EXPECT_TRUE(src.ep.readable);
  EXPECT_EQ(d.pending(), Direction::kFirstRead);
  EXPECT_EQ(d.buffered().substr(0, 9), "reply:abc");
  EXPECT_EQ(empty.used(), 0u);
}

TEST(DirectionTest, ALeaseLetsItGrowToItsCapacityAndGoesBackWhenDrained) {
  constexpr size_t kCapacity = 512 * 1024;
  Source src = make_source(kMiB);
  BufferBudget budget(4 * kMiB);
  Direction d;
  d.set_capacity(kCapacity, &budget);
  bool progressed = false;
  ASSERT_TRUE(d.fill(src.ep, progressed).is_ok());
  EXPECT_TRUE(src.ep.readable);  // stopped at its capacity, not for want of bytes
  EXPECT_EQ(d.pending(), kCapacity);
  EXPECT_EQ(budget.used(), kCapacity - Direction::kFirstRead);

  int pair[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair));
  Endpoint dst;
  dst.fd.reset(pair[0]);
  UniqueFd peer(pair[1]);
  int big = 4 * static_cast<int>(kMiB);
  setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  setsockopt(pair[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  dst.writable = true;
  std::string received;
  char buf[65536];
  while (d.pending() > 0) {
    ASSERT_TRUE(d.flush(dst, progressed).is_ok());
    ssize_t n;
    while ((n = read(peer.get(), buf, sizeof buf)) > 0) received.append(buf, static_cast<size_t>(n));
    dst.writable = true;  // the test drained the peer: writable again
  }
  EXPECT_EQ(budget.used(), 0u);  // drained: the lease went back
  EXPECT_EQ(received.size(), kCapacity);
  EXPECT_TRUE(received == src.data.substr(0, kCapacity));  // (not EXPECT_EQ: half a MiB in a failure message)
}

TEST(DirectionTest, ALeaseIsGivenBackWhenTheDirectionIsReplaced) {
  Source src = make_source(kMiB);
  BufferBudget budget(4 * kMiB);
  Direction d;
  d.set_capacity(256 * 1024, &budget);
  bool progressed = false;
  ASSERT_TRUE(d.fill(src.ep, progressed).is_ok());
  EXPECT_EQ(d.pending(), 256u * 1024);
  EXPECT_EQ(budget.used(), 256u * 1024 - Direction::kFirstRead);
  d = Direction();  // as the forwarding path does when switching origins
  EXPECT_EQ(budget.used(), 0u);
}

TEST(DirectionTest, GatedWritesOnlyWhatWasReleased) {
  int pair[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair));
  Endpoint dst;
  dst.fd.reset(pair[0]);
  dst.writable = true;
  UniqueFd peer(pair[1]);
  auto drain = [&] {
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = read(peer.get(), buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  };
  Direction d;
  d.set_gated(true);
  d.push("checked head|held");
  bool progressed = false;
  ASSERT_TRUE(d.flush(dst, progressed).is_ok());
  EXPECT_FALSE(progressed);
  EXPECT_EQ("", drain());  // gated and nothing released: nothing goes
  d.release(13);
  EXPECT_EQ(13u, d.released());
  ASSERT_TRUE(d.flush(dst, progressed).is_ok());
  EXPECT_EQ("checked head|", drain());
  EXPECT_EQ(0u, d.released());
  EXPECT_EQ("held", d.buffered());  // the unreleased rest stays, at the front now
  d.release(100);                   // never more than is buffered
  EXPECT_EQ(4u, d.released());
  d.discard_buffered();
  EXPECT_EQ(0u, d.released());
  d.push("after");
  d.set_gated(false);  // ungated: everything goes
  ASSERT_TRUE(d.flush(dst, progressed).is_ok());
  EXPECT_EQ("after", drain());
}

TEST(DirectionTest, PushFromQueuesWhatTheProducerWroteInPlaceAfterWhatWasThere) {
  Direction d;
  d.push("head|");
  size_t asked = 0;
  size_t n = d.push_from(64, [&](char* to, size_t max) {
    asked = max;
    std::memcpy(to, "record", 6);
    return size_t{6};  // less than it was offered
  });
  EXPECT_EQ(64u, asked);
  EXPECT_EQ(6u, n);
  EXPECT_EQ("head|record", d.buffered());
  // Nothing offered: the producer is not called.
  EXPECT_EQ(0u, d.push_from(0, [](char*, size_t) -> size_t {
    ADD_FAILURE() << "called with no room";
    return 0;
  }));
  EXPECT_EQ(0u, d.push_from(8, [](char*, size_t) { return size_t{0}; }));
  EXPECT_EQ("head|record", d.buffered());
}

}  // namespace
}  // namespace oishell::relay
