// What may change on a running sandbox (policy/live_network.h) and the session's policy kept for it
// (policy/live_policy.h): the network section changes, with its diff; every other section, the network's mode,
// a udp rule for a sandbox without a datagram relay, a new terminated host and a new credential are refused with
// why; a refused proposal leaves the policy in force as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "policy/live_network.h"
#include "policy/live_policy.h"
#include "policy/compiler.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

const char* kBase = "version: 1\nnetwork:\n  mode: proxy\n  allow: [a.example]\n  on_unlisted: deny\n";

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(LiveNetwork, AllowAndDenyRulesChangeWithTheirDiff) {
  SandboxSpec running = compiled_spec(kBase);
  SandboxSpec proposed = compiled_spec(
      "version: 1\nnetwork:\n  mode: proxy\n  allow: [b.example]\n  deny: ['*.bad.example']\n"
      "  hosts: {b.example: 192.0.2.7}\n  on_unlisted: ask\n");
  auto change = policy::live_network_change(running, running.network, proposed);
  ASSERT_TRUE(change.is_ok()) << change.status().message();
  EXPECT_EQ(change->network.allow.size(), 1u);
  std::string widened = joined(change->widened), narrowed = joined(change->narrowed);
  EXPECT_NE(widened.find("network: allow b.example"), std::string::npos) << widened;
  EXPECT_NE(widened.find("unlisted destinations are asked about"), std::string::npos) << widened;
  EXPECT_NE(widened.find("b.example resolves to 192.0.2.7"), std::string::npos) << widened;
  EXPECT_NE(narrowed.find("network: allow a.example"), std::string::npos) << narrowed;
  EXPECT_NE(narrowed.find("*.bad.example is not denied"), std::string::npos) << narrowed;
  // The same policy again: nothing to say.
  auto same = policy::live_network_change(running, running.network, compiled_spec(kBase));
  ASSERT_TRUE(same.is_ok());
  EXPECT_TRUE(same->same());
}

TEST(LiveNetwork, OtherSectionsAreRefusedSayingWhyAndWhatToDo) {
  SandboxSpec running = compiled_spec(kBase);
  SandboxSpec files = compiled_spec(std::string(kBase) + "filesystem:\n  read_only: [/data/cache]\n");
  auto refused = policy::live_network_change(running, running.network, files);
  ASSERT_FALSE(refused.is_ok());
  const std::string& m = refused.status().message();
  EXPECT_NE(m.find("the filesystem section cannot change on a running sandbox"), std::string::npos) << m;
  EXPECT_NE(m.find("Landlock rules"), std::string::npos) << m;
  EXPECT_NE(m.find("only narrow"), std::string::npos) << m;
  EXPECT_NE(m.find("start a new session"), std::string::npos) << m;

  SandboxSpec limits = compiled_spec(std::string(kBase) + "limits:\n  memory: 1GiB\n");
  auto limited = policy::live_network_change(running, running.network, limits);
  ASSERT_FALSE(limited.is_ok());
  EXPECT_NE(limited.status().message().find("the limits section cannot change"), std::string::npos);

  SandboxSpec strict = compiled_spec(std::string(kBase) + "process:\n  seccomp: strict\n");
  auto seccomp = policy::live_network_change(running, running.network, strict);
  ASSERT_FALSE(seccomp.is_ok());
  EXPECT_NE(seccomp.status().message().find("the process section cannot change"), std::string::npos);

  SandboxSpec none = compiled_spec("version: 1\nnetwork:\n  mode: none\n");
  auto mode = policy::live_network_change(running, running.network, none);
  ASSERT_FALSE(mode.is_ok());
  EXPECT_NE(mode.status().message().find("network.mode cannot change"), std::string::npos) << mode.status().message();
}

TEST(LiveNetwork, WhatTheSandboxWasNotBuiltForIsRefused) {
  SandboxSpec running = compiled_spec(kBase);
  SandboxSpec udp = compiled_spec(
      "version: 1\nnetwork:\n  mode: proxy\n  allow: [a.example, {host: ntp.example, ports: [123], protocol: udp}]\n");
  auto refused = policy::live_network_change(running, running.network, udp);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("no datagram relay socket"), std::string::npos)
      << refused.status().message();
  // Started with a udp rule: udp rules change like the others.
  auto changed = policy::live_network_change(udp, udp.network, compiled_spec(
      "version: 1\nnetwork:\n  mode: proxy\n  allow: [{host: ntp2.example, ports: [123], protocol: udp}]\n"));
  ASSERT_TRUE(changed.is_ok()) << changed.status().message();
  EXPECT_NE(joined(changed->widened).find("udp ntp2.example:123"), std::string::npos) << joined(changed->widened);

  SandboxSpec terminated = compiled_spec(
      "version: 1\nnetwork:\n  mode: proxy\n  allow: [{host: api.example, tls: terminate, methods: [GET]}]\n");
  auto tls = policy::live_network_change(running, running.network, terminated);
  ASSERT_FALSE(tls.is_ok());
  EXPECT_NE(tls.status().message().find("`tls: terminate` for api.example cannot be added"), std::string::npos)
      << tls.status().message();
  // A terminated host the sandbox was started with may get other methods.
  auto methods = policy::live_network_change(terminated, terminated.network, compiled_spec(
      "version: 1\nnetwork:\n  mode: proxy\n  allow: [{host: api.example, tls: terminate, methods: [GET, POST]}]\n"));
  ASSERT_TRUE(methods.is_ok()) << methods.status().message();
  EXPECT_NE(joined(methods->widened).find("methods POST"), std::string::npos) << joined(methods->widened);
}

class LivePolicyTest : public ::testing::Test {
 protected:
  Result<policy::LivePolicy> load(const std::string& text) {
    PolicySource source;
    source.file = dir_.write("policy.yaml", text);
    return policy::LivePolicy::load(source, {}, fake_context());
  }
  TempDir dir_;
};

TEST_F(LivePolicyTest, PatchAllowsDeniesAndRemovesByText) {
  auto live = load(kBase);
  ASSERT_TRUE(live.is_ok()) << live.status().message();
  policy::NetworkPatch allow;
  allow.allow = nlohmann::json::array({"b.example:443"});
  auto widened = live->propose_patch(allow);
  ASSERT_TRUE(widened.is_ok()) << widened.status().message();
  EXPECT_EQ(joined(widened->widened), "network: allow b.example:443\n");
  EXPECT_TRUE(widened->narrowed.empty());
  live->commit();
  EXPECT_EQ(live->current().allow.size(), 2u);

  // Denying the same text takes the allow rule out and adds the deny rule.
  policy::NetworkPatch deny;
  deny.deny = nlohmann::json::array({"b.example:443"});
  auto narrowed = live->propose_patch(deny);
  ASSERT_TRUE(narrowed.is_ok()) << narrowed.status().message();
  live->commit();
  ASSERT_EQ(live->current().deny.size(), 1u);
  EXPECT_EQ(live->current().deny[0].text, "b.example:443");
  EXPECT_EQ(live->current().allow.size(), 1u);

  policy::NetworkPatch remove;
  remove.remove = {"b.example:443"};
  ASSERT_TRUE(live->propose_patch(remove).is_ok());
  live->commit();
  EXPECT_TRUE(live->current().deny.empty());
  remove.remove = {"never.example"};
  auto missing = live->propose_patch(remove);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("no allow or deny rule reads `never.example`"), std::string::npos);
}

TEST_F(LivePolicyTest, ARefusedProposalChangesNothing) {
  auto live = load(kBase);
  ASSERT_TRUE(live.is_ok()) << live.status().message();
  policy::NetworkPatch bad;
  bad.allow = nlohmann::json::array({"*"});
  auto refused = live->propose_patch(bad);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("policy patch"), std::string::npos) << refused.status().message();
  live->commit();  // nothing pending: nothing happens
  ASSERT_EQ(live->current().allow.size(), 1u);
  EXPECT_EQ(live->current().allow[0].text, "a.example");

  // A whole network section, with an unknown key: refused with its position.
  auto unknown = live->propose_network({{"allow", {"c.example"}}, {"alow", {"d.example"}}});
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("network.alow"), std::string::npos) << unknown.status().message();
  auto whole = live->propose_network({{"allow", {"c.example"}}});
  ASSERT_TRUE(whole.is_ok()) << whole.status().message();
  live->commit();
  EXPECT_EQ(live->current().allow[0].text, "c.example");
}

TEST_F(LivePolicyTest, TheFileReadAgainAndAnInvalidEditKeepsThePolicy) {
  auto live = load(kBase);
  ASSERT_TRUE(live.is_ok()) << live.status().message();
  dir_.write("policy.yaml", "version: 1\nnetwork:\n  mode: proxy\n  allow: [a.example, b.example]\n");
  auto reloaded = live->propose_reload();
  ASSERT_TRUE(reloaded.is_ok()) << reloaded.status().message();
  EXPECT_EQ(joined(reloaded->widened), "network: allow b.example\n");
  live->commit();
  dir_.write("policy.yaml", "version: 1\nnetwork:\n  allow: [a.example\n");  // broken YAML
  auto broken = live->propose_reload();
  ASSERT_FALSE(broken.is_ok());
  EXPECT_NE(broken.status().message().find("policy.yaml:"), std::string::npos) << broken.status().message();
  live->commit();
  EXPECT_EQ(live->current().allow.size(), 2u);
}

// The figure of issue 38: a change to a policy of 1,000 rules is checked and diffed in well under a millisecond's
// share of the whole (the relay's part: bench/relay/live_policy.sh). The figure is printed, not asserted.
TEST_F(LivePolicyTest, AThousandRulesAreComparedQuickly) {
  std::string text = "version: 1\nnetwork:\n  mode: proxy\n  allow:\n";
  for (int i = 0; i < 1000; ++i) text += "    - host" + std::to_string(i) + ".example:443\n";
  auto live = load(text);
  ASSERT_TRUE(live.is_ok()) << live.status().message();
  policy::NetworkPatch deny;
  deny.deny = nlohmann::json::array({"host7.example:443"});
  auto us = [](auto d) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  };
  Result<policy::LiveNetworkChange> change = Status::error("not run");
  std::vector<long long> took;
  for (int round = 0; round < 5; ++round) {  // the first also pays for first allocations
    auto began = std::chrono::steady_clock::now();
    change = live->propose_patch(deny);
    took.push_back(us(std::chrono::steady_clock::now() - began));
  }
  ASSERT_TRUE(change.is_ok()) << change.status().message();
  EXPECT_EQ(change->network.allow.size(), 999u);
  // Of which the comparison alone (the compile is the rest).
  auto began = std::chrono::steady_clock::now();
  auto compared = policy::live_network_change(live->started(), live->current(), [&] {
    SandboxSpec proposed = live->started();
    proposed.network = change->network;
    return proposed;
  }());
  long long compare_us = us(std::chrono::steady_clock::now() - began);
  ASSERT_TRUE(compared.is_ok());
  const long long first = took.front();
  std::sort(took.begin(), took.end());
  std::printf("[ figure ] validating and diffing a change of a 1,000-rule policy: median %lld us (first %lld us), "
              "of which comparing %lld us\n", took[2], first, compare_us);
}

}  // namespace
}  // namespace oishell::testing
