// The policy as the model and `%policy` read it (agent/sandbox/policy_describe.h), from the summary `oishell supervise`
// sends (policy/summary.h): hosts with what they may be sent and which credentials the sandbox holds for them, by
// name and variable, never a secret.
#include "agent/sandbox/policy_describe.h"

#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "policy/compiler.h"
#include "policy/load.h"
#include "policy/summary.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

constexpr const char* kSecret = "ghp_describe-SECRET-5511";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The summary of `text` compiled on this host (in a fresh workspace), as the supervisor makes it.
json summary_of(const std::string& text, uint64_t block_wall_ms = 0) {
  char workspace[] = "/tmp/oishell-describe-XXXXXX";
  if (!::mkdtemp(workspace)) {
    ADD_FAILURE() << "mkdtemp";
    return json();
  }
  auto loaded = policy::load_policy_text(text + "filesystem:\n  workspace: " + workspace + "\n", "test.yaml", "/");
  EXPECT_TRUE(loaded.ok()) << policy::format_diagnostics(loaded.errors);
  auto spec = policy::compile(loaded.policy, CompileContext::from_process());
  ::rmdir(workspace);
  EXPECT_TRUE(spec.is_ok()) << spec.status().message();
  return spec.is_ok() ? policy_summary(*spec, block_wall_ms) : json();
}

TEST(DescribePolicy, HostsWithMethodsPathsAndCredentialNamesNeverTheSecret) {
  ::setenv("OISHELL_DESCRIBE_TEST_TOKEN", kSecret, 1);  // where the relay would read the secret from
  std::string text = summary_of(R"(version: 1
network:
  allow:
    - pypi.org:443
    - host: api.github.com
      ports: [443]
      tls: terminate
      methods: [GET, HEAD]
      paths: ["/repos/**", /user]
      credentials:
        - {name: github, env: GITHUB_TOKEN, scheme: Bearer, from_env: OISHELL_DESCRIBE_TEST_TOKEN}
    - host: svc.internal.example
      ports: [443]
      tls: terminate
      methods: [GET]
      credentials:
        - {name: internal, env: SVC_KEY, header: X-Api-Key, from_env: OISHELL_DESCRIBE_TEST_TOKEN}
)").dump();
  std::string shown = describe_policy(json::parse(text));
  EXPECT_TRUE(has(shown, "allowed: pypi.org:443, api.github.com:443 (TLS terminated; GET, HEAD on /repos/**, /user; "
                         "credential `github` in $GITHUB_TOKEN, added by the sandbox outside: use the variable as if "
                         "it were the token, as `Authorization: Bearer $GITHUB_TOKEN`), svc.internal.example:443 "
                         "(TLS terminated; GET only; credential `internal` in $SVC_KEY"))
      << shown;
  EXPECT_TRUE(has(shown, "as `X-Api-Key: $SVC_KEY`")) << shown;
  // What the placeholder is and what not to do with it.
  EXPECT_TRUE(has(shown, "holds a placeholder (oishell-cred-...), never the secret")) << shown;
  EXPECT_TRUE(has(shown, "do not print it")) << shown;
  EXPECT_FALSE(has(shown, kSecret)) << shown;
  EXPECT_FALSE(has(text, kSecret)) << text;
  EXPECT_FALSE(has(shown, "OISHELL_DESCRIBE_TEST_TOKEN")) << shown;  // nor where it is read from
  ::unsetenv("OISHELL_DESCRIBE_TEST_TOKEN");
}

TEST(DescribePolicy, WithoutCredentialsNoCredentialLine) {
  std::string shown = describe_policy(summary_of("version: 1\nnetwork:\n  allow: [pypi.org:443]\n"));
  EXPECT_TRUE(has(shown, "- Network: proxy, allowlist; allowed: pypi.org:443; other destinations: deny.")) << shown;
  EXPECT_FALSE(has(shown, "Credentials")) << shown;
  EXPECT_FALSE(has(shown, "network_rules")) << shown;  // known keys are not repeated as raw JSON
}

// A supervisor from before `network_rules`: the rule texts as they were.
TEST(DescribePolicy, OlderSummaryWithRuleTextsOnly) {
  json old = {{"network", "proxy, allowlist"}, {"network_allow", {"pypi.org:443", "example.com"}},
              {"network_unlisted", "ask"}};
  EXPECT_EQ("- Network: proxy, allowlist; allowed: pypi.org:443, example.com; other destinations: the user is asked. "
            "Every connection a program makes, through the HTTP(S)_PROXY the sandbox sets or directly, is decided by "
            "these rules outside the sandbox; a refused one fails (EACCES, or 403 from the proxy).\n",
            describe_policy(old));
}

// Limits as people write them, not in bytes; the network line says what is true (every connection decided).
TEST(DescribePolicy, LimitsReadableAndNetworkLineTrue) {
  std::string shown = describe_policy(summary_of("version: 1\nlimits:\n  memory: 4GiB\n  pids: 256\n", 90'000));
  EXPECT_TRUE(has(shown, "- Limits: memory 4 GiB, wall time 1m30s per block, 256 processes\n")) << shown;
  EXPECT_FALSE(has(shown, "4294967296")) << shown;
  EXPECT_FALSE(has(shown, "memory_bytes")) << shown;
  EXPECT_TRUE(has(shown, "Every connection a program makes")) << shown;
  EXPECT_FALSE(has(shown, "Programs reach the network through")) << shown;
  EXPECT_TRUE(has(describe_policy(summary_of("version: 1\nnetwork:\n  mode: none\n")), "Programs have no network"));
}

}  // namespace
}  // namespace oishell::agent
