// Relay::update_network (issue 38): the network policy of a running relay replaced. The next connection follows the
// new rules at once; an open tunnel to a destination no longer allowed is closed (net.closed with the reason) while
// one still allowed goes on; a rule that lost `inspect: false` closes the tunnels it let through uninspected. The time
// a change takes is a benchmark's figure (bench/relay/live_policy.sh), not a test's.
#include <gtest/gtest.h>

#include "tests/relay/test_util.h"

namespace oishell::relay::testing {
namespace {

class RelayLivePolicyTest : public ::testing::Test {
 protected:
  Server echo_{Server::Kind::echo, "127.0.0.3"};
  NetworkSpec spec(std::vector<std::string> allow, std::vector<std::string> deny = {}) {
    NetworkSpec s;
    s.on_unlisted = OnUnlisted::deny;
    for (const char* name : {"alpha.example", "beta.example"}) s.hosts[name] = "127.0.0.3";
    s.allow_private = {cidr("127.0.0.0/8")};
    for (const auto& a : allow) s.allow.push_back(a.starts_with("raw:") ? uninspected(a.substr(4)) : rule(a));
    for (const auto& d : deny) s.deny.push_back(rule(d));
    return s;
  }
  std::string target(const std::string& host) const { return host + ":" + std::to_string(echo_.port()); }

  // A CONNECT tunnel with one checked request echoed; an invalid fd and the refusal otherwise.
  UniqueFd open_tunnel(RelayUnderTest& relay, const std::string& host, std::string* refusal) {
    UniqueFd fd = http_connect("127.0.0.1", relay.http_port, target(host), refusal);
    if (!fd) return fd;
    if (!echoes(fd.get(), host)) {
      *refusal = "no echo";
      return UniqueFd();
    }
    return fd;
  }
  bool echoes(int fd, const std::string& host) {
    std::string request = "GET / HTTP/1.1\r\nHost: " + target(host) + "\r\n\r\n";
    return send_all(fd, request) && read_exact(fd, request.size()) == request;
  }
};

TEST_F(RelayLivePolicyTest, WidenedThenNarrowedTheNextConnectionFollowsAndTheOpenOneIsClosed) {
  RelayUnderTest relay(spec({"alpha.example"}));
  std::string refusal;
  // Before: beta is refused (on_unlisted: deny), alpha works.
  EXPECT_FALSE(open_tunnel(relay, "beta.example", &refusal));
  EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403")) << refusal;
  UniqueFd alpha = open_tunnel(relay, "alpha.example", &refusal);
  ASSERT_TRUE(alpha) << refusal;

  auto widened = relay.relay().update_network(spec({"alpha.example", "beta.example"}));
  ASSERT_TRUE(widened.is_ok()) << widened.status().message();
  EXPECT_EQ(0u, widened->closed_connections);
  UniqueFd beta = open_tunnel(relay, "beta.example", &refusal);
  ASSERT_TRUE(beta) << refusal;

  // Narrowed: beta denied. Its open tunnel is closed (the client reads EOF), alpha's goes on.
  auto narrowed = relay.relay().update_network(spec({"alpha.example"}, {"beta.example"}));
  ASSERT_TRUE(narrowed.is_ok()) << narrowed.status().message();
  EXPECT_EQ(1u, narrowed->closed_connections);
  int error = -1;
  EXPECT_EQ("", read_all(beta.get(), &error));  // closed by the relay: EOF (or a reset), nothing more echoed
  EXPECT_TRUE(echoes(alpha.get(), "alpha.example"));
  // And the next connection to beta is refused by the deny rule.
  EXPECT_FALSE(open_tunnel(relay, "beta.example", &refusal));
  EXPECT_NE(std::string::npos, refusal.find("deny beta.example")) << refusal;
  auto closed = relay.events.wait_for("net.closed", "beta.example");
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ("policy changed: denied now (deny beta.example)", closed->value("reason", ""));
}

TEST_F(RelayLivePolicyTest, ARuleThatNowInspectsClosesTheTunnelsItLetThroughUninspected) {
  RelayUnderTest relay(spec({"raw:alpha.example", "beta.example"}));
  std::string refusal;
  UniqueFd raw = http_connect("127.0.0.1", relay.http_port, target("alpha.example"), &refusal);
  ASSERT_TRUE(raw) << refusal;
  ASSERT_TRUE(send_all(raw.get(), "\x01\x02 not http"));  // passes only uninspected
  EXPECT_EQ("\x01\x02 not http", read_exact(raw.get(), 11));
  UniqueFd beta = open_tunnel(relay, "beta.example", &refusal);
  ASSERT_TRUE(beta) << refusal;
  auto update = relay.relay().update_network(spec({"alpha.example", "beta.example"}));
  ASSERT_TRUE(update.is_ok()) << update.status().message();
  EXPECT_EQ(1u, update->closed_connections);
  EXPECT_EQ("", read_all(raw.get()));
  EXPECT_TRUE(echoes(beta.get(), "beta.example"));  // unchanged: goes on
}

TEST_F(RelayLivePolicyTest, AChangeToOneOfAThousandRulesIsInForceAndLeavesTheOpenTunnelsAlone) {
  // A thousand rules and twenty open tunnels: each change swaps one more rule. The host it dropped is refused at the
  // next connection and its open tunnel (exactly that one) is closed; the host it added is let through and stays so;
  // the other open tunnels go on. How long a change takes is measured by bench/relay/live_policy.sh, not here.
  std::vector<std::string> many;
  for (int i = 0; i < 1000; ++i) many.push_back("host" + std::to_string(i) + ".example");
  many.push_back("alpha.example");
  NetworkSpec next = spec(many);
  for (int i = 0; i < 1000; ++i) next.hosts["host" + std::to_string(i) + ".example"] = "127.0.0.3";
  RelayUnderTest relay(next);
  std::string refusal;
  std::vector<UniqueFd> open;
  for (int i = 0; i < 20; ++i) {
    open.push_back(open_tunnel(relay, "alpha.example", &refusal));
    ASSERT_TRUE(open.back()) << refusal;
  }
  for (int round = 0; round < 3; ++round) {
    std::string dropped = "host" + std::to_string(500 + round) + ".example";
    std::string added = "changed" + std::to_string(round) + ".example";
    UniqueFd to_dropped = open_tunnel(relay, dropped, &refusal);
    ASSERT_TRUE(to_dropped) << refusal;
    next.allow[static_cast<size_t>(500 + round)] = rule(added);
    next.hosts[added] = "127.0.0.3";
    auto update = relay.relay().update_network(next);
    ASSERT_TRUE(update.is_ok()) << update.status().message();
    EXPECT_EQ(1u, update->closed_connections) << "round " << round;
    EXPECT_EQ("", read_all(to_dropped.get()));  // closed by the relay
    EXPECT_FALSE(open_tunnel(relay, dropped, &refusal)) << dropped;
    EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403")) << refusal;
    open.push_back(open_tunnel(relay, added, &refusal));  // held: still allowed after the later rounds
    EXPECT_TRUE(open.back()) << added << ": " << refusal;
    EXPECT_TRUE(open_tunnel(relay, "host999.example", &refusal)) << refusal;  // an unchanged rule still holds
  }
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(echoes(open[static_cast<size_t>(i)].get(), "alpha.example"));
  for (int round = 0; round < 3; ++round) {
    EXPECT_TRUE(echoes(open[static_cast<size_t>(20 + round)].get(), "changed" + std::to_string(round) + ".example"));
  }
}

}  // namespace
}  // namespace oishell::relay::testing
