// Relay::serve_dns(): the stub on the relay's own loop and thread, names looked up with the relay's resolver.
// A query waiting makes activity_fd() readable (what starts the relay's thread in the supervisor).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "dns_test_util.h"
#include "runtime/broker/name_map.h"
#include "runtime/relay/relay.h"

namespace oishell::broker {
namespace {

using namespace testing;

UniqueFd bound(int type, sockaddr_in* addr) {
  UniqueFd fd(::socket(AF_INET, type | SOCK_CLOEXEC, 0));
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr->sin_port = 0;
  socklen_t len = sizeof *addr;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(addr), len) != 0 ||
      (type == SOCK_STREAM && ::listen(fd.get(), 8) != 0) ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(addr), &len) != 0) {
    fd.reset();
  }
  return fd;
}

TEST(RelayDns, ServesTheStubOnTheRelaysLoop) {
  NetworkSpec spec;
  spec.allow.push_back(*HostRule::parse("pinned.example"));
  spec.hosts["pinned.example"] = "127.0.0.2";
  spec.allow_private.push_back(*Cidr::parse("127.0.0.0/8"));
  NullEventSink events;
  NameMap names;
  auto relay = relay::Relay::create(spec, events, nullptr);
  ASSERT_TRUE(relay.is_ok()) << relay.status().message();
  sockaddr_in http{}, dns{};
  std::vector<relay::Listener> listeners;
  listeners.push_back({bound(SOCK_STREAM, &http), relay::Protocol::http});
  ASSERT_TRUE((*relay)->listen(std::move(listeners)).is_ok());
  std::vector<UniqueFd> udp;
  udp.push_back(bound(SOCK_DGRAM, &dns));
  ASSERT_TRUE(udp[0]);
  ASSERT_TRUE((*relay)->serve_dns(std::move(udp), {}, names).is_ok());
  EXPECT_FALSE((*relay)->serve_dns({}, {}, names).is_ok());  // once

  UniqueFd client(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(0, ::connect(client.get(), reinterpret_cast<sockaddr*>(&dns), sizeof dns));
  timeval tv{5, 0};
  ::setsockopt(client.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  auto query = make_query({.id = 77, .name = "pinned.example"});
  ASSERT_EQ(static_cast<ssize_t>(query.size()), ::send(client.get(), query.data(), query.size(), 0));
  // Nothing serves yet, but the owner can see that something waits.
  pollfd activity{(*relay)->activity_fd(), POLLIN, 0};
  ASSERT_EQ(1, ::poll(&activity, 1, 5000));
  ASSERT_TRUE((*relay)->serve().is_ok());
  EXPECT_FALSE((*relay)->serve_dns({}, {}, names).is_ok());  // not once the thread runs
  std::vector<uint8_t> buffer(2048);
  ssize_t n = ::recv(client.get(), buffer.data(), buffer.size(), 0);
  ASSERT_GT(n, 0);
  buffer.resize(static_cast<size_t>(n));
  auto response = parse_response(buffer);
  ASSERT_TRUE(response);
  EXPECT_EQ(77, response->id);
  EXPECT_EQ("198.18.0.1", response->address());
  EXPECT_EQ("pinned.example", names.name_of(*IpAddress::parse("198.18.0.1")));
  (*relay)->stop();
}

}  // namespace
}  // namespace oishell::broker
