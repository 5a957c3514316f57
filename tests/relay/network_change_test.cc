// refusal_after_change (runtime/relay/network_change.h): what a changed network policy says of a flow already open
// past the relay's connections, a socket the broker installed or a datagram association. The end-to-end closing is
// relay_live_policy_test.cc's; here each reason, and that a flow still allowed is left alone.
#include "runtime/relay/network_change.h"

#include <gtest/gtest.h>

#include "tests/relay/test_util.h"

namespace oishell::relay::testing {
namespace {

NetworkSpec allowing(std::vector<HostRule> rules) {
  NetworkSpec spec;
  spec.on_unlisted = OnUnlisted::deny;
  spec.allow = std::move(rules);
  spec.allow_private = {cidr("127.0.0.0/8")};
  return spec;
}

TEST(RefusalAfterChange, AFlowStillAllowedIsLeftOpen) {
  NetworkSpec spec = allowing({uninspected("api.example:443")});
  EXPECT_EQ("", refusal_after_change(spec, "api.example", 443, "127.0.0.3", HostRule::Protocol::tcp, true));
}

TEST(RefusalAfterChange, ADestinationNoRuleAllowsAnyMoreIsDeniedNow) {
  NetworkSpec spec = allowing({uninspected("api.example:443")});
  EXPECT_EQ("policy changed: denied now (on_unlisted: deny)",
            refusal_after_change(spec, "other.example", 443, "127.0.0.3", HostRule::Protocol::tcp, true));
  spec.deny.push_back(rule("api.example"));
  EXPECT_EQ("policy changed: denied now (deny api.example)",
            refusal_after_change(spec, "api.example", 443, "127.0.0.3", HostRule::Protocol::tcp, true));
}

TEST(RefusalAfterChange, ARuleThatNowInspectsEndsOnlyAnUninspectedFlow) {
  NetworkSpec spec = allowing({rule("api.example:443")});
  EXPECT_EQ("policy changed: now inspected (allow api.example:443)",
            refusal_after_change(spec, "api.example", 443, "127.0.0.3", HostRule::Protocol::tcp, true));
  EXPECT_EQ("", refusal_after_change(spec, "api.example", 443, "127.0.0.3", HostRule::Protocol::tcp, false));
}

TEST(RefusalAfterChange, TheAddressGuardAppliesToTheAddressConnectedTo) {
  NetworkSpec spec = allowing({uninspected("api.example:443")});
  spec.allow_private.clear();
  std::string why = refusal_after_change(spec, "api.example", 443, "127.0.0.3", HostRule::Protocol::tcp, true);
  EXPECT_TRUE(why.starts_with("policy changed: ")) << why;
  EXPECT_NE(std::string::npos, why.find("allow_private")) << why;
  // An address that does not parse is not checked (the decision by name stands).
  EXPECT_EQ("", refusal_after_change(spec, "api.example", 443, "", HostRule::Protocol::tcp, true));
}

TEST(RefusalAfterChange, ADatagramNeedsAUdpRule) {
  HostRule udp = rule("dns.example:53");
  udp.protocol = HostRule::Protocol::udp;
  NetworkSpec spec = allowing({rule("dns.example:53")});
  EXPECT_EQ("policy changed: denied now (udp: no udp rule allows it)",
            refusal_after_change(spec, "dns.example", 53, "127.0.0.3", HostRule::Protocol::udp, false));
  spec.allow.push_back(udp);
  EXPECT_EQ("", refusal_after_change(spec, "dns.example", 53, "127.0.0.3", HostRule::Protocol::udp, false));
}

}  // namespace
}  // namespace oishell::relay::testing
