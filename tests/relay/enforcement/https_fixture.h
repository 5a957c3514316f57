#pragma once
// The HTTPS end-to-end tests' common setup (issue 16): an HTTPS upstream on the host's 127.0.0.2 answering for
// api.example.test and other.example.test with certificates of its own test CA, a policy whose rules terminate TLS
// for it, and `oishell run` of a shell script inside with the events written outside the workspace.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <iterator>
#include <string>

#include "tests/enforcement/harness.h"
#include "tests/relay/test_tls_server.h"

namespace oishell::test {

inline constexpr const char* kSecret = "s3cret-0f-the-test";

class RelayHttpsFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok());
    ::setenv("OISHELL_TEST_SECRET", kSecret, 1);  // oishell's environment: where the policy says the secret is
    port_ = std::to_string(server_.port());
    base_ = "https://api.example.test:" + port_;
    use_rules(api_rule("[GET, HEAD]", R"(["/bytes/**", /head])"));
  }
  void TearDown() override { ::unsetenv("OISHELL_TEST_SECRET"); }

  // The terminating rule for api.example.test with the `test` credential (TEST_TOKEN in the sandbox).
  std::string api_rule(const std::string& methods, const std::string& paths) const {
    return R"(    - host: api.example.test
      ports: [)" + port_ + R"(]
      tls: terminate
      upstream_ca: )" + server_.ca_file() + R"(
      methods: )" + methods + R"(
      paths: )" + paths + R"(
      credentials: [{name: test, env: TEST_TOKEN, scheme: Bearer, from_env: OISHELL_TEST_SECRET}]
)";
  }
  // Writes the policy: `rules` (YAML list items under network.allow), the names pinned to `hosts` ("name: ip").
  void use_rules(const std::string& rules,
                 const std::string& hosts = "api.example.test: 127.0.0.2, other.example.test: 127.0.0.2",
                 const std::string& private_nets = "127.0.0.2/32") {
    policy_ = dir_.write("policy.yaml", "version: 1\nextends: default\nnetwork:\n  allow:\n" + rules +
                                            "  hosts: {" + hosts + "}\n  allow_private: [" + private_nets + "]\n");
  }
  SandboxRun sh(const std::string& script, int timeout_seconds = 60) {
    return run_sandboxed({"--policy", policy_, "--workspace", dir_.path(), "--events", events_file()},
                         {"/bin/sh", "-c", script}, timeout_seconds);
  }
  std::string events_file() const { return outside_.path() + "/events.jsonl"; }
  // The last run's events, one JSON object a line.
  std::string events() const {
    std::ifstream in(events_file());
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  size_t heads_received() const { return server_.request_heads().size(); }

  relay::testing::TlsTestServer server_{"127.0.0.2", {"api.example.test", "other.example.test"}};
  TempDir dir_;      // the workspace
  TempDir outside_;  // the events, never seen inside
  std::string port_, policy_, base_;
};

}  // namespace oishell::test
