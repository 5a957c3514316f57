// DatagramRelay on its own (in one process, no namespace): an "inner" socket on 127.0.0.1 stands for the sandbox's,
// an echo socket on 127.0.0.1 for the destination. Forwarding both ways byte-identical, unknown sources and
// oversized datagrams dropped, the association limit (EAGAIN), replacement, and idle expiry with net.closed.
#include "runtime/relay/datagram_relay.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <string>
#include <vector>

#include "tests/relay/test_util.h"

namespace oishell::relay {
namespace {

UniqueFd udp_socket() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(0, ::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a));
  timeval tv{0, 200'000};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int big = 4 << 20;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  return fd;
}

DatagramSource address_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  EXPECT_EQ(0, ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len));
  return DatagramSource::from(ss, len);
}

// A socket of the "supervisor" connected to `to`.
UniqueFd connected_to(const DatagramSource& to) {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  EXPECT_EQ(0, ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to.addr), to.len));
  return fd;
}

struct Fixture {
  explicit Fixture(DatagramOptions options = {})
      : loop(EventLoop::create().value()), relay(loop, events, options), inner_fd(udp_socket()) {
    inner = address_of(inner_fd.get());
    std::vector<UniqueFd> sockets;
    sockets.push_back(std::move(inner_fd));
    EXPECT_TRUE(relay.serve(std::move(sockets)).is_ok());
  }
  // Serves the loop for `ms`.
  void pump(int ms = 50) {
    epoll_event evs[16];
    auto until = Clock::now() + std::chrono::milliseconds(ms);
    while (Clock::now() < until) {
      auto n = loop.wait(10, evs, 16);
      ASSERT_TRUE(n.is_ok());
      for (int i = 0; i < *n; ++i) relay.on_event(evs[i].data.u64, evs[i].events);
      relay.on_timer();
    }
  }
  // A client connected to the inner socket, and associated with the echo socket.
  UniqueFd client(const DatagramSource& echo, std::string host = "echo.example") {
    UniqueFd c = udp_socket();
    EXPECT_EQ(0, ::connect(c.get(), reinterpret_cast<const sockaddr*>(&inner.addr), inner.len));
    EXPECT_TRUE(relay.associate(address_of(c.get()), connected_to(echo), {host, 7, "allow udp x", "127.0.0.1"})
                    .is_ok());
    return c;
  }

  testing::RecordingSink events;
  EventLoop loop;
  DatagramRelay relay;
  UniqueFd inner_fd;
  DatagramSource inner;
};

// Echoes every datagram waiting on `fd` back to its sender; returns their sizes.
std::vector<size_t> echo_all(int fd) {
  std::vector<size_t> sizes;
  std::vector<char> buf(65536);
  for (;;) {
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    ssize_t n = ::recvfrom(fd, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0) return sizes;
    sizes.push_back(static_cast<size_t>(n));
    ::sendto(fd, buf.data(), static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), len);
  }
}

std::string receive(int fd) {
  std::vector<char> buf(70000);
  ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
  return n < 0 ? "<" + std::to_string(errno) + ">" : std::string(buf.data(), static_cast<size_t>(n));
}

TEST(DatagramRelay, ForwardsBothWaysByteIdentical) {
  Fixture f;
  UniqueFd echo = udp_socket();
  UniqueFd c = f.client(address_of(echo.get()));
  std::string big(65507, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  for (const std::string& d : {std::string("hello"), std::string(), big}) {
    ASSERT_EQ(static_cast<ssize_t>(d.size()), ::send(c.get(), d.data(), d.size(), 0));
    f.pump();
    EXPECT_EQ(std::vector<size_t>{d.size()}, echo_all(echo.get()));
    f.pump();
    EXPECT_EQ(d, receive(c.get()));
  }
  EXPECT_EQ(0u, f.relay.dropped());
}

TEST(DatagramRelay, UnknownSourcesAndOversizedDatagramsAreDropped) {
  DatagramOptions small;
  small.max_datagram = 1000;
  Fixture f(small);
  UniqueFd echo = udp_socket();
  UniqueFd c = f.client(address_of(echo.get()));
  UniqueFd stranger = udp_socket();
  ASSERT_EQ(0, ::connect(stranger.get(), reinterpret_cast<const sockaddr*>(&f.inner.addr), f.inner.len));
  ASSERT_EQ(4, ::send(stranger.get(), "evil", 4, 0));
  std::string large(1001, 'x');
  ASSERT_EQ(1001, ::send(c.get(), large.data(), large.size(), 0));
  ASSERT_EQ(1000, ::send(c.get(), large.data(), 1000, 0));  // the neighbour: at the limit, forwarded
  f.pump();
  EXPECT_EQ(std::vector<size_t>{1000}, echo_all(echo.get()));
  EXPECT_EQ(2u, f.relay.dropped());
  f.pump();
  EXPECT_EQ(std::string(1000, 'x'), receive(c.get()));
  EXPECT_EQ("<" + std::to_string(EAGAIN) + ">", receive(stranger.get()));  // nothing came back either
}

TEST(DatagramRelay, AssociationsAreBoundedReplacedAndExpire) {
  DatagramOptions options;
  options.max_associations = 2;
  options.idle_timeout_ms = 300;
  Fixture f(options);
  UniqueFd echo = udp_socket();
  UniqueFd a = f.client(address_of(echo.get()), "a.example");
  UniqueFd b = f.client(address_of(echo.get()), "b.example");
  EXPECT_FALSE(f.relay.has_room());
  UniqueFd c = udp_socket();
  Status refused = f.relay.associate(address_of(c.get()), connected_to(address_of(echo.get())), {});
  EXPECT_EQ(EAGAIN, refused.errno_value());
  // The same source again replaces its association (not a third one).
  EXPECT_TRUE(f.relay.associate(address_of(a.get()), connected_to(address_of(echo.get())), {"a2.example", 7, "", ""})
                  .is_ok());
  EXPECT_EQ(2u, f.relay.size());
  auto closed = f.events.wait_for("net.closed", "a.example");
  ASSERT_TRUE(closed.has_value());
  // Idle: both end after 300 ms without a datagram, with net.closed.
  f.pump(450);
  EXPECT_EQ(0u, f.relay.size());
  EXPECT_TRUE(f.events.wait_for("net.closed", "b.example").has_value());
  EXPECT_TRUE(f.relay.has_room());
  // After expiry a datagram from the old source is dropped.
  ASSERT_EQ(1, ::send(b.get(), "z", 1, 0));
  f.pump();
  EXPECT_TRUE(echo_all(echo.get()).empty());
}

TEST(DatagramRelay, OnceDestroyedNothingIsForwardedAndEachAssociationIsReported) {
  testing::RecordingSink events;
  EventLoop loop = EventLoop::create().value();
  UniqueFd echo = udp_socket();
  UniqueFd inner_fd = udp_socket();
  DatagramSource inner = address_of(inner_fd.get());
  UniqueFd c = udp_socket();
  ASSERT_EQ(0, ::connect(c.get(), reinterpret_cast<const sockaddr*>(&inner.addr), inner.len));
  {
    DatagramRelay relay(loop, events);
    std::vector<UniqueFd> sockets;
    sockets.push_back(std::move(inner_fd));
    ASSERT_TRUE(relay.serve(std::move(sockets)).is_ok());
    ASSERT_TRUE(relay.associate(address_of(c.get()), connected_to(address_of(echo.get())),
                                {"gone.example", 7, "allow udp gone.example:7", "127.0.0.1"})
                    .is_ok());
  }  // the relay stops: its inner socket and the association's socket close
  auto closed = events.wait_for("net.closed", "gone.example");
  ASSERT_TRUE(closed.has_value());
  // The program's datagram now meets a closed port (the kernel's ICMP answer), and nothing reaches the server.
  ::send(c.get(), "late", 4, 0);
  epoll_event evs[4];
  ASSERT_TRUE(loop.wait(50, evs, 4).is_ok());
  EXPECT_TRUE(echo_all(echo.get()).empty());
}

}  // namespace
}  // namespace oishell::relay
