// End to end: `oishell run` with curl inside. The only way out is the relay in the supervisor: an allowed,
// pinned name works through the proxy (absolute-form and CONNECT); anything else gets the 403 explanation; a
// direct connection that ignores the proxy fails. The upstream HTTP server runs here, on the host's 127.0.0.2.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/enforcement/harness.h"
#include "tests/relay/test_util.h"

namespace oishell::test {
namespace {

using relay::testing::Server;

constexpr const char* kCurl = "/usr/bin/curl";

class RelayEnforcementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // curl is a test dependency (tools/dev installs it): its absence is a failure, not a skip.
    ASSERT_TRUE(std::filesystem::exists(kCurl)) << "curl is not installed at " << kCurl << " (tools/dev installs it)";
    policy_ = dir_.write("policy.yaml", R"(version: 1
extends: default
network:
  mode: proxy
  allow: ["allowed.example"]
  hosts: {allowed.example: 127.0.0.2}
  allow_private: [127.0.0.0/8]
  on_unlisted: deny
)");
  }
  SandboxRun curl(std::vector<std::string> args) {
    std::vector<std::string> command = {kCurl, "-sS", "-m", "20"};
    command.insert(command.end(), args.begin(), args.end());
    return run_sandboxed({"--policy", policy_, "--workspace", dir_.path()}, command, 60);
  }
  std::string url(const std::string& host, const std::string& path) {
    return "http://" + host + ":" + std::to_string(server_.port()) + path;
  }

  TempDir dir_;
  std::string policy_;
  Server server_{Server::Kind::http, "127.0.0.2"};
};

TEST_F(RelayEnforcementTest, AllowedPinnedNameWorksThroughTheProxy) {
  SandboxRun forwarded = curl({url("allowed.example", "/bytes/1000")});
  ASSERT_EQ(0, forwarded.status) << forwarded.err;
  EXPECT_EQ(1000u, forwarded.out.size());
  for (size_t i = 0; i < forwarded.out.size(); ++i) {
    ASSERT_EQ(relay::testing::body_byte(i), static_cast<uint8_t>(forwarded.out[i])) << i;
  }
  SandboxRun tunnelled = curl({"--proxytunnel", url("allowed.example", "/host")});  // CONNECT, then GET inside
  ASSERT_EQ(0, tunnelled.status) << tunnelled.err;
  EXPECT_NE(std::string::npos, tunnelled.out.find("Host: allowed.example:")) << tunnelled.out;
  EXPECT_EQ(2, server_.accepted());
}

TEST_F(RelayEnforcementTest, AnythingElseGetsThe403Explanation) {
  SandboxRun other = curl({url("other.example", "/bytes/10")});
  EXPECT_EQ(0, other.status) << other.err;  // curl without -f prints the proxy's answer
  EXPECT_NE(std::string::npos, other.out.find("other.example:" + std::to_string(server_.port()) + " denied"))
      << other.out;
  EXPECT_NE(std::string::npos, other.out.find("rule: on_unlisted: deny")) << other.out;
  SandboxRun tunnel = curl({"https://other.example/"});  // CONNECT other.example:443
  EXPECT_EQ(56, tunnel.status) << tunnel.err;             // CURLE_RECV_ERROR: the CONNECT was answered 403
  EXPECT_NE(std::string::npos, tunnel.err.find("403")) << tunnel.err;
  SandboxRun literal = curl({url("127.0.0.2", "/bytes/10")});  // the server's address, but no IP rule allows it
  EXPECT_NE(std::string::npos, literal.out.find("denied")) << literal.out;
  EXPECT_EQ(0, server_.accepted());
}

TEST_F(RelayEnforcementTest, DirectConnectionBypassingTheProxyFails) {
  SandboxRun direct = curl({"--noproxy", "*", url("127.0.0.2", "/bytes/10")});
  EXPECT_EQ(7, direct.status) << direct.err;  // CURLE_COULDNT_CONNECT: no route out but the relay
  SandboxRun through = curl({url("allowed.example", "/bytes/10")});  // the neighbour through the proxy works
  EXPECT_EQ(0, through.status) << through.err;
  EXPECT_EQ(10u, through.out.size());
  EXPECT_EQ(1, server_.accepted());
}

}  // namespace
}  // namespace oishell::test
