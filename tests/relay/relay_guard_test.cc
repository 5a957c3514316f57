// The private-address guard's view of this machine: a name pinned to one of the machine's own addresses is denied
// before any connect (so these tests send nothing to it), unless allow_private covers it. Traffic goes only to
// 127.0.0.x.
#include <gtest/gtest.h>

#include "runtime/relay/host_addresses.h"
#include "tests/relay/test_util.h"

namespace oishell::relay::testing {
namespace {

class RelayGuardTest : public ::testing::Test {
 protected:
  Server http_{Server::Kind::http, "127.0.0.2"};
  Server self_{Server::Kind::echo, "127.0.0.5"};  // stands for a service of this machine

  NetworkSpec spec() {
    NetworkSpec s;
    s.allow = {rule("allowed.example"), uninspected("self.example")};
    s.hosts["allowed.example"] = "127.0.0.2";
    s.hosts["self.example"] = "127.0.0.5";
    s.allow_private = {cidr("127.0.0.2/32")};
    return s;
  }
};

TEST_F(RelayGuardTest, MachineAddressFromTheSpecIsRefusedUnlessAllowPrivateCoversIt) {
  NetworkSpec s = spec();
  s.host_addresses = {*IpAddress::parse("127.0.0.5")};  // as if 127.0.0.5 were an interface's address
  {
    RelayUnderTest relay(s);
    std::string refusal;
    EXPECT_FALSE(http_connect("127.0.0.1", relay.http_port, "self.example:" + std::to_string(self_.port()), &refusal)
                     .valid());
    EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403 Forbidden")) << refusal;
    auto denied = relay.events.wait_for("net.denied", "self.example");
    ASSERT_TRUE(denied.has_value());
    EXPECT_EQ("private-address guard", (*denied)["rule"]);
    // Named as the machine's: the injected address is what the guard saw.
    EXPECT_EQ("127.0.0.5 is loopback, an address of this machine, and not covered by allow_private",
              (*denied)["reason"]);
    EXPECT_EQ(0, self_.accepted());
    // The neighbour, allowed by allow_private, connects.
    UniqueFd ok = http_connect("127.0.0.1", relay.http_port, "allowed.example:" + std::to_string(http_.port()),
                               &refusal);
    EXPECT_TRUE(ok.valid()) << refusal;
  }
  s.allow_private.push_back(cidr("127.0.0.5/32"));
  RelayUnderTest relay(s);
  std::string refusal;
  UniqueFd fd = http_connect("127.0.0.1", relay.http_port, "self.example:" + std::to_string(self_.port()), &refusal);
  ASSERT_TRUE(fd.valid()) << refusal;
  send_all(fd.get(), "here");
  EXPECT_EQ("here", read_exact(fd.get(), 4));
  EXPECT_EQ(1, self_.accepted());
}

TEST_F(RelayGuardTest, NamePinnedToThisMachinesOwnAddressIsDeniedBeforeConnect) {
  auto addresses = machine_addresses();
  ASSERT_TRUE(addresses.is_ok()) << addresses.status().message();
  std::optional<IpAddress> own;
  for (const IpAddress& a : *addresses) {
    bool loopback = a.family == IpAddress::Family::v4 ? a.bytes[0] == 127 : a == *IpAddress::parse("::1");
    if (!loopback) {
      own = a;
      break;
    }
  }
  if (!own) {
    GTEST_SKIP() << "this machine has no address but loopback: the guard's use of the machine's addresses is "
                    "covered with an injected one (MachineAddressFromTheSpecIsRefusedUnlessAllowPrivateCoversIt)";
  }
  // Relay::create reads the machine's addresses itself; the spec names none. The denial comes before any
  // connect, so nothing is sent to the address (and it is this machine's anyway).
  NetworkSpec s = spec();
  s.hosts["self.example"] = own->to_string();
  RelayUnderTest relay(s);
  std::string refusal;
  EXPECT_FALSE(http_connect("127.0.0.1", relay.http_port, "self.example:9", &refusal).valid());
  EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403 Forbidden")) << refusal;
  auto denied = relay.events.wait_for("net.denied", "self.example");
  ASSERT_TRUE(denied.has_value());
  EXPECT_EQ("private-address guard", (*denied)["rule"]);
  std::string reason = (*denied)["reason"];
  EXPECT_TRUE(reason.starts_with(own->to_string() + " is ")) << reason;
  EXPECT_TRUE(reason.ends_with("an address of this machine, and not covered by allow_private") ||
              reason.find("cloud") != std::string::npos)  // a machine whose address is a listed endpoint
      << reason;
  for (const auto& e : relay.events.all()) EXPECT_NE("net.allowed", e["event"]) << e;
}

}  // namespace
}  // namespace oishell::relay::testing
