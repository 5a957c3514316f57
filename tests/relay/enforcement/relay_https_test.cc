// End to end (issue 16): `oishell run` with curl and python inside, an HTTPS upstream on the host's 127.0.0.2 whose
// certificate comes from a test CA (the policy's upstream_ca). The relay ends TLS for the host, decides each
// request by method and path, and puts the secret in place of the placeholder only outside the sandbox.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "tests/enforcement/harness.h"
#include "tests/relay/test_tls_server.h"

namespace oishell::test {
namespace {

using relay::testing::TlsTestServer;

constexpr const char* kSecret = "s3cret-0f-the-test";

class RelayHttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok());
    ::setenv("OISHELL_TEST_SECRET", kSecret, 1);  // oishell's environment: where the policy says the secret is
    const std::string port = std::to_string(server_.port());
    policy_ = dir_.write("policy.yaml", R"(version: 1
extends: default
network:
  allow:
    - host: api.example.test
      ports: [)" + port + R"(]
      tls: terminate
      upstream_ca: )" + server_.ca_file() + R"(
      methods: [GET, HEAD]
      paths: ["/bytes/**", /head]
      credentials: [{name: test, env: TEST_TOKEN, scheme: Bearer, from_env: OISHELL_TEST_SECRET}]
  hosts: {api.example.test: 127.0.0.2}
  allow_private: [127.0.0.2/32]
)");
    base_ = "https://api.example.test:" + port;
  }
  void TearDown() override { ::unsetenv("OISHELL_TEST_SECRET"); }
  SandboxRun sh(const std::string& script) {
    return run_sandboxed({"--policy", policy_, "--workspace", dir_.path()}, {"/bin/sh", "-c", script}, 60);
  }

  TlsTestServer server_{"127.0.0.2", {"api.example.test"}};
  TempDir dir_;
  std::string policy_, base_;
};

TEST_F(RelayHttpsTest, RequestsAreDecidedByMethodAndPathOnTheSameConnection) {
  // One curl, two requests on one kept-alive connection: the GET passes, the POST gets the JSON 403.
  SandboxRun r = sh("curl -sS -m 20 " + base_ + "/bytes/100 -o /dev/null -w '%{http_code}\\n' --next -sS -m 20 -X POST "
                    "-d x " + base_ + "/bytes/1 -w '\\n%{http_code} %{num_connects}\\n'");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("200\n{\"error\":\"policy_denied\",\"host\":\"api.example.test\",\"method\":\"POST\",\"path\":\"/bytes/1\","
            "\"rule\":\"no rule allows this method and path\"}\n403 0\n",
            r.out)
      << r.err;
  // The POST never reached the server.
  for (const auto& head : server_.request_heads()) EXPECT_FALSE(head.starts_with("POST")) << head;
}

TEST_F(RelayHttpsTest, TheSecretIsAddedOutsideAndNeverInside) {
  SandboxRun r = sh("curl -sS -m 20 -H \"Authorization: Bearer $TEST_TOKEN\" " + base_ +
                    "/bytes/10 -o /dev/null -w '%{http_code}\\n'; "
                    "echo \"$TEST_TOKEN\" | cut -c1-17; "
                    "cat /proc/self/environ | tr '\\0' '\\n' | grep -c " + std::string(kSecret) + "; "
                    "grep -rl " + std::string(kSecret) + " /etc /tmp \"$HOME\" 2>/dev/null | wc -l");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("200\noishell-cred-test\n0\n0\n", r.out) << r.err;
  auto heads = server_.request_heads();
  ASSERT_FALSE(heads.empty());
  EXPECT_NE(std::string::npos, heads.back().find(std::string("Authorization: Bearer ") + kSecret)) << heads.back();
  EXPECT_EQ(std::string::npos, heads.back().find("oishell-cred-")) << heads.back();
  // The neighbour: the placeholder in the URL is refused, naming the credential, and reaches nobody.
  const size_t before = server_.request_heads().size();
  SandboxRun leak = sh("curl -sS -m 20 \"" + base_ + "/bytes/1?t=$TEST_TOKEN\" -w '\\n%{http_code}\\n'");
  EXPECT_NE(std::string::npos, leak.out.find("\"error\":\"credential_refused\"")) << leak.out << leak.err;
  EXPECT_NE(std::string::npos, leak.out.find("\n403\n")) << leak.out;
  EXPECT_EQ(before, server_.request_heads().size());
}

TEST_F(RelayHttpsTest, PythonTrustsTheSandboxAuthorityThroughTheBundle) {
  SandboxRun r = sh("python3 -c \"import urllib.request,os; print(urllib.request.urlopen('" + base_ +
                    "/bytes/5').status)\"");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("200\n", r.out) << r.err;
}

}  // namespace
}  // namespace oishell::test
