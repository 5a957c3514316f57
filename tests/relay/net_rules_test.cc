// Unit tests for policy/net_rules.h: host patterns, matching, normalisation, decisions and the private-address
// guard the relay applies to every resolved address.
#include "policy/net_rules.h"

#include <gtest/gtest.h>

#include "policy/sandbox_spec.h"

namespace oishell {
namespace {

HostRule rule(std::string_view text) {
  auto r = HostRule::parse(text);
  EXPECT_TRUE(r.is_ok()) << text << ": " << (r.is_ok() ? "" : r.status().message());
  return r.is_ok() ? *r : HostRule{};
}

std::string parse_error(std::string_view text) {
  auto r = HostRule::parse(text);
  EXPECT_FALSE(r.is_ok()) << text << " parsed but should not";
  return r.is_ok() ? std::string() : r.status().message();
}

IpAddress ip(std::string_view text) {
  auto a = IpAddress::parse(text);
  EXPECT_TRUE(a.has_value()) << text;
  return a.value_or(IpAddress{});
}

TEST(HostRuleParse, ExactNameIsNormalised) {
  HostRule r = rule("Example.COM.");
  EXPECT_EQ(HostRule::Kind::exact, r.kind);
  EXPECT_EQ("example.com", r.host);
  EXPECT_TRUE(r.ports.empty());
  EXPECT_EQ("Example.COM.", r.text);
}

TEST(HostRuleParse, SuffixWithPort) {
  HostRule r = rule("*.example.org:443");
  EXPECT_EQ(HostRule::Kind::suffix, r.kind);
  EXPECT_EQ("example.org", r.host);
  EXPECT_EQ(std::vector<uint16_t>{443}, r.ports);
}

TEST(HostRuleParse, IpAndCidrForms) {
  HostRule cidr = rule("10.0.0.0/8");
  EXPECT_EQ(HostRule::Kind::ip_cidr, cidr.kind);
  ASSERT_TRUE(cidr.cidr.has_value());
  EXPECT_EQ(8, cidr.cidr->prefix_len);
  HostRule v6 = rule("[::1]:8080");
  EXPECT_EQ(HostRule::Kind::ip_cidr, v6.kind);
  EXPECT_EQ(128, v6.cidr->prefix_len);
  EXPECT_EQ(std::vector<uint16_t>{8080}, v6.ports);
  HostRule single = rule("192.0.2.1");
  EXPECT_EQ(32, single.cidr->prefix_len);
  HostRule bare_v6 = rule("2001:db8::/32");
  EXPECT_EQ(32, bare_v6.cidr->prefix_len);
  EXPECT_TRUE(bare_v6.ports.empty());
}

TEST(HostRuleParse, RejectsBadPatternsWithReason) {
  EXPECT_NE(std::string::npos, parse_error("*").find("allow_all"));
  EXPECT_NE(std::string::npos, parse_error("*.com").find("top-level"));
  EXPECT_NE(std::string::npos, parse_error("a..b.com").find("empty label"));
  EXPECT_NE(std::string::npos, parse_error("exa mple.com").find("not allowed"));
  EXPECT_NE(std::string::npos, parse_error("foo.*.com").find("leading"));
  EXPECT_NE(std::string::npos, parse_error("example.com:0").find("1..65535"));
  EXPECT_NE(std::string::npos, parse_error("example.com:65536").find("1..65535"));
  EXPECT_NE(std::string::npos, parse_error("example.com:80,443").find("object form"));
  EXPECT_NE(std::string::npos, parse_error("example.com:").find("1..65535"));
  EXPECT_NE(std::string::npos, parse_error("10.0.0.1/8").find("host bits"));
  EXPECT_NE(std::string::npos, parse_error("10.0.0.0/33").find("prefix length"));
  EXPECT_NE(std::string::npos, parse_error("127.1").find("numeric"));
  EXPECT_NE(std::string::npos, parse_error("0x7f.0x1").find("numeric"));
  EXPECT_NE(std::string::npos, parse_error("[example.com]:80").find("brackets"));
  EXPECT_FALSE(HostRule::parse("").is_ok());
}

TEST(HostRuleParse, ObjectFormPorts) {
  auto r = HostRule::parse("api.example.net", {443, 80, 443});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ((std::vector<uint16_t>{80, 443}), r->ports);
  EXPECT_TRUE(r->matches("api.example.net", 80));
  EXPECT_FALSE(r->matches("api.example.net", 8080));
  EXPECT_FALSE(HostRule::parse("api.example.net:80", {443}).is_ok());
  EXPECT_FALSE(HostRule::parse("api.example.net", {0}).is_ok());
}

TEST(HostRuleMatch, WildcardCoversSubdomainsNotApex) {
  HostRule r = rule("*.example.org");
  EXPECT_TRUE(r.matches("www.example.org", 443));
  EXPECT_TRUE(r.matches("a.b.example.org", 80));
  EXPECT_FALSE(r.matches("example.org", 443));  // the apex needs its own rule
  EXPECT_FALSE(r.matches("badexample.org", 443));
  EXPECT_FALSE(r.matches("example.org.evil.net", 443));
}

TEST(HostRuleMatch, ExactAndPorts) {
  HostRule r = rule("example.com:443");
  EXPECT_TRUE(r.matches("example.com", 443));
  EXPECT_FALSE(r.matches("example.com", 80));
  EXPECT_FALSE(r.matches("www.example.com", 443));
}

TEST(HostRuleMatch, IpLiteralsOnlyMatchIpRules) {
  HostRule name = rule("example.com");
  EXPECT_FALSE(name.matches("93.184.216.34", 443));
  HostRule cidr = rule("192.0.2.0/24");
  EXPECT_TRUE(cidr.matches("192.0.2.7", 443));
  EXPECT_FALSE(cidr.matches("192.0.3.7", 443));
  EXPECT_FALSE(cidr.matches("example.com", 443));  // a name never matches a CIDR, whatever it resolves to
  HostRule v6 = rule("[2001:db8::1]:443");
  EXPECT_TRUE(v6.matches("2001:db8::1", 443));
  EXPECT_FALSE(v6.matches("2001:db8::1", 80));
  HostRule v4 = rule("192.0.2.1");
  EXPECT_TRUE(v4.matches("::ffff:192.0.2.1", 80));  // the mapped form is the same destination
}

TEST(NormaliseHost, NamesAndLiterals) {
  EXPECT_EQ("example.com", normalise_host("EXAMPLE.com."));
  EXPECT_EQ("::1", normalise_host("[::1]"));
  EXPECT_EQ("::1", normalise_host("0:0::0001"));
  EXPECT_EQ("127.0.0.1", normalise_host("127.0.0.1"));
  EXPECT_EQ(std::nullopt, normalise_host(""));
  EXPECT_EQ(std::nullopt, normalise_host("example.com.."));
  EXPECT_EQ(std::nullopt, normalise_host("[127.0.0.1]"));
  EXPECT_EQ(std::nullopt, normalise_host("exa\rmple.com"));
  EXPECT_EQ(std::nullopt, normalise_host("fe80::1%eth0"));
  EXPECT_EQ(std::nullopt, normalise_host("2130706433"));  // decimal IPv4 forms are not names
  EXPECT_EQ(std::nullopt, normalise_host("127.1"));
  EXPECT_EQ(std::nullopt, normalise_host(std::string(300, 'a')));
}

NetworkSpec spec_with(std::vector<std::string> allow, std::vector<std::string> deny) {
  NetworkSpec spec;
  for (auto& a : allow) spec.allow.push_back(rule(a));
  for (auto& d : deny) spec.deny.push_back(rule(d));
  return spec;
}

TEST(Decide, DenyWinsThenAllowThenUnlisted) {
  NetworkSpec spec = spec_with({"*.example.org", "example.com:443"}, {"secret.example.org"});
  NetDecision d = decide(spec, "secret.example.org", 443);
  EXPECT_EQ(NetDecision::Verdict::deny, d.verdict);
  EXPECT_EQ("deny secret.example.org", d.rule);
  d = decide(spec, "www.example.org", 443);
  EXPECT_EQ(NetDecision::Verdict::allow, d.verdict);
  EXPECT_EQ("allow *.example.org", d.rule);
  d = decide(spec, "example.com", 80);
  EXPECT_EQ(NetDecision::Verdict::deny, d.verdict);
  EXPECT_EQ("on_unlisted: deny", d.rule);
  spec.on_unlisted = OnUnlisted::ask;
  EXPECT_EQ(NetDecision::Verdict::ask, decide(spec, "example.com", 80).verdict);
  spec.allow_all = true;
  EXPECT_EQ(NetDecision::Verdict::allow, decide(spec, "anything.net", 80).verdict);
  EXPECT_EQ(NetDecision::Verdict::deny, decide(spec, "secret.example.org", 80).verdict);
}

TEST(PrivateAddresses, Classification) {
  for (const char* special :
       {"127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "100.64.0.1",
        "100.127.255.255", "169.254.169.254", "224.0.0.1", "239.1.1.1", "0.0.0.0", "255.255.255.255",
        "240.0.0.1", "::", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1",
        "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::127.0.0.1", "64:ff9b::a00:1", "2002:7f00:1::1"}) {
    EXPECT_TRUE(ip(special).is_private_or_special()) << special;
  }
  for (const char* pub : {"93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "192.169.0.1", "11.0.0.1",
                          "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"}) {
    EXPECT_FALSE(ip(pub).is_private_or_special()) << pub;
  }
}

TEST(PrivateAddresses, AllowPrivateExempts) {
  NetworkSpec spec;
  EXPECT_NE(std::string::npos, check_resolved_address(spec, ip("127.0.0.2")).find("loopback"));
  EXPECT_NE(std::string::npos, check_resolved_address(spec, ip("::ffff:10.0.0.1")).find("allow_private"));
  EXPECT_EQ("", check_resolved_address(spec, ip("93.184.216.34")));
  spec.allow_private.push_back(*Cidr::parse("127.0.0.0/8"));
  EXPECT_EQ("", check_resolved_address(spec, ip("127.0.0.2")));
  EXPECT_EQ("", check_resolved_address(spec, ip("::ffff:127.0.0.2")));  // mapped form of an allowed address
  EXPECT_NE("", check_resolved_address(spec, ip("::1")));               // ::1 is not in 127.0.0.0/8
  EXPECT_NE("", check_resolved_address(spec, ip("10.0.0.1")));
  spec.allow_private.push_back(*Cidr::parse("::1"));
  EXPECT_EQ("", check_resolved_address(spec, ip("::1")));
}

TEST(PrivateAddresses, CloudMetadataEndpointsAreNamedAndExemptedOnlyExactly) {
  NetworkSpec spec;
  // Azure's WireServer is in a public range: refused only because it is listed.
  EXPECT_TRUE(ip("168.63.129.16").is_private_or_special());
  EXPECT_FALSE(ip("168.63.129.17").is_private_or_special());  // the neighbour is an ordinary address
  EXPECT_EQ("168.63.129.16 is a cloud platform endpoint (Azure WireServer: host agent, extensions, DNS); only an "
            "allow_private entry naming it exactly (/32 or /128) exempts it",
            check_resolved_address(spec, ip("168.63.129.16")));
  EXPECT_EQ("", check_resolved_address(spec, ip("168.63.129.17")));
  for (const char* form : {"::ffff:168.63.129.16", "64:ff9b::a83f:8110"}) {  // mapped, NAT64
    EXPECT_NE(std::string::npos, check_resolved_address(spec, ip(form)).find("Azure WireServer")) << form;
  }
  EXPECT_NE(std::string::npos, check_resolved_address(spec, ip("169.254.169.254")).find("cloud metadata endpoint"));
  EXPECT_NE(std::string::npos, check_resolved_address(spec, ip("100.100.100.200")).find("Alibaba Cloud"));
  EXPECT_NE(std::string::npos, check_resolved_address(spec, ip("fd00:ec2::254")).find("(AWS)"));
  EXPECT_NE(std::string::npos, check_resolved_address(spec, ip("fd20:ce::254")).find("(GCP)"));
  // A range that covers an endpoint does not exempt it; its own /32 does. The rest of the range is exempted.
  spec.allow_private = {*Cidr::parse("100.64.0.0/10"), *Cidr::parse("169.254.0.0/16"), *Cidr::parse("168.0.0.0/8")};
  EXPECT_EQ("", check_resolved_address(spec, ip("100.100.100.1")));
  EXPECT_NE("", check_resolved_address(spec, ip("100.100.100.200")));
  EXPECT_NE("", check_resolved_address(spec, ip("169.254.169.254")));
  EXPECT_NE("", check_resolved_address(spec, ip("168.63.129.16")));
  spec.allow_private.push_back(*Cidr::parse("168.63.129.16/32"));
  EXPECT_EQ("", check_resolved_address(spec, ip("168.63.129.16")));
  EXPECT_EQ("", check_resolved_address(spec, ip("::ffff:168.63.129.16")));
}

TEST(PrivateAddresses, TheMachinesOwnAddressesAreRefused) {
  NetworkSpec spec;
  // Injected as the relay's machine would report them (Relay::create adds the real ones).
  spec.host_addresses = {ip("203.0.113.7"), ip("2001:db8::7"), ip("10.0.2.15")};
  EXPECT_EQ("203.0.113.7 is an address of this machine, and not covered by allow_private",
            check_resolved_address(spec, ip("203.0.113.7")));
  EXPECT_EQ("::ffff:203.0.113.7 is an address of this machine, and not covered by allow_private",
            check_resolved_address(spec, ip("::ffff:203.0.113.7")));
  EXPECT_NE("", check_resolved_address(spec, ip("2001:db8::7")));
  EXPECT_EQ("10.0.2.15 is private (RFC 1918), an address of this machine, and not covered by allow_private",
            check_resolved_address(spec, ip("10.0.2.15")));
  // The neighbours: other public addresses pass.
  EXPECT_EQ("", check_resolved_address(spec, ip("203.0.113.8")));
  EXPECT_EQ("", check_resolved_address(spec, ip("2001:db8::8")));
  // allow_private covers the machine's addresses like any other.
  spec.allow_private = {*Cidr::parse("203.0.113.0/24"), *Cidr::parse("10.0.0.0/8")};
  EXPECT_EQ("", check_resolved_address(spec, ip("203.0.113.7")));
  EXPECT_EQ("", check_resolved_address(spec, ip("10.0.2.15")));
  EXPECT_NE("", check_resolved_address(spec, ip("2001:db8::7")));
}

TEST(Decide, AnUninspectedRuleDecidesAmongSeveralMatches) {
  NetworkSpec spec = spec_with({"*.example.org", "git.example.org:22"}, {});
  spec.allow[1].inspect = false;
  NetDecision ssh = decide(spec, "git.example.org", 22);
  EXPECT_EQ("allow git.example.org:22", ssh.rule);
  EXPECT_FALSE(ssh.inspect);
  NetDecision https = decide(spec, "git.example.org", 443);  // only the inspected wildcard covers 443
  EXPECT_EQ("allow *.example.org", https.rule);
  EXPECT_TRUE(https.inspect);
  spec.allow_all = true;
  EXPECT_FALSE(decide(spec, "git.example.org", 22).inspect);  // allow_all does not hide the uninspected grant
  NetDecision all = decide(spec, "other.example.net", 22);
  EXPECT_EQ("allow_all", all.rule);
  EXPECT_TRUE(all.inspect);
  NetDecision name = decide_name(spec, "git.example.org");  // a name has no port: any of the rule's ports
  EXPECT_EQ(NetDecision::Verdict::allow, name.verdict);
  EXPECT_FALSE(name.inspect);
}

TEST(LocalhostName, IsLocalhostAndTheNamesUnderIt) {
  EXPECT_TRUE(is_localhost_name("localhost"));
  EXPECT_TRUE(is_localhost_name("api.localhost"));
  EXPECT_FALSE(is_localhost_name("localhost.example"));
  EXPECT_FALSE(is_localhost_name("notlocalhost"));
  EXPECT_FALSE(is_localhost_name("example.org"));
  ASSERT_EQ(2u, localhost_addresses().size());
  EXPECT_EQ("127.0.0.1", localhost_addresses()[0].to_string());
  EXPECT_EQ("::1", localhost_addresses()[1].to_string());
}

TEST(CidrTest, ParseContainsPrint) {
  auto c = Cidr::parse("100.64.0.0/10");
  ASSERT_TRUE(c.is_ok());
  EXPECT_TRUE(c->contains(ip("100.127.1.1")));
  EXPECT_FALSE(c->contains(ip("100.128.0.0")));
  EXPECT_EQ("100.64.0.0/10", c->to_string());
  auto all6 = Cidr::parse("::/0");
  ASSERT_TRUE(all6.is_ok());
  EXPECT_TRUE(all6->contains(ip("2001:db8::1")));
  EXPECT_FALSE(all6->contains(ip("10.0.0.1")));
  auto mapped = Cidr::parse("::ffff:127.0.0.0/104");
  ASSERT_TRUE(mapped.is_ok());
  EXPECT_TRUE(mapped->contains(ip("127.0.0.5")));
  EXPECT_FALSE(Cidr::parse("10.0.0.0/").is_ok());
  EXPECT_FALSE(Cidr::parse("10.0.0.0/x").is_ok());
  EXPECT_FALSE(Cidr::parse("nonsense").is_ok());
  EXPECT_EQ("::1/128", Cidr::parse("[::1]")->to_string());
}

}  // namespace
}  // namespace oishell
