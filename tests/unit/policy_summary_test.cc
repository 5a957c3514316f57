// The policy summary `oishell supervise` sends in its `ready` event (policy/summary.h): what each allow rule lets
// through, and which credential names the sandbox holds in which variable, never a secret or where it is read from.
#include <gtest/gtest.h>

#include "policy/compiler.h"
#include "policy/summary.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

using nlohmann::json;

Result<SandboxSpec> compile_text(const std::string& text) {
  auto r = load_text(text);
  if (!r.ok()) return Status::error(policy::format_diagnostics(r.errors));
  return policy::compile(r.policy, fake_context());
}

// fake_context()'s SECRET_TOKEN is "do-not-leak": the secret of the `github` credential.
const char kPolicy[] = R"(version: 1
network:
  allow:
    - pypi.org:443
    - host: api.github.com
      ports: [443]
      tls: terminate
      methods: [GET, HEAD]
      paths: ["/repos/**", /user]
      credentials:
        - {name: github, env: GITHUB_TOKEN, scheme: Bearer, from_env: SECRET_TOKEN}
    - host: svc.internal.example
      ports: [443]
      tls: terminate
      credentials:
        - {name: internal, env: SVC_KEY, header: X-Api-Key, from_env: SECRET_TOKEN}
)";

TEST(PolicySummary, EachAllowRuleWithItsTlsMethodsPathsAndCredentialNames) {
  auto spec = compile_text(kPolicy);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  json s = policy_summary(*spec, 30000);
  // The texts stay as they were, for clients that read only them.
  EXPECT_EQ(json({"pypi.org:443", "api.github.com:443", "svc.internal.example:443"}), s["network_allow"]);
  ASSERT_EQ(3u, s["network_rules"].size()) << s.dump();
  EXPECT_EQ(json({{"rule", "pypi.org:443"}, {"protocol", "tcp"}, {"tls", "passthrough"}}), s["network_rules"][0]);
  EXPECT_EQ(json({{"rule", "api.github.com:443"},
                  {"protocol", "tcp"},
                  {"tls", "terminate"},
                  {"methods", {"GET", "HEAD"}},
                  {"paths", {"/repos/**", "/user"}},
                  {"credentials", {{{"name", "github"}, {"env", "GITHUB_TOKEN"}, {"header", "Authorization"},
                                    {"scheme", "Bearer"}}}}}),
            s["network_rules"][1]);
  // Every method and path: no keys for them; no scheme: none shown.
  EXPECT_EQ(json({{"rule", "svc.internal.example:443"},
                  {"protocol", "tcp"},
                  {"tls", "terminate"},
                  {"credentials", {{{"name", "internal"}, {"env", "SVC_KEY"}, {"header", "X-Api-Key"}}}}}),
            s["network_rules"][2]);
  EXPECT_EQ(30000, s["limits"]["wall_time_ms"]);
}

TEST(PolicySummary, NeverTheSecretNorWhereItIsReadFrom) {
  // ~/.config/gh/token: a file of fake_host(), outside every path the sandbox sees.
  std::string text = std::string(kPolicy) + "    - host: files.example\n      tls: terminate\n      credentials:\n" +
                     "        - {name: filed, env: FILED, from_file: ~/.config/gh/token}\n";
  auto spec = compile_text(text);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  std::string dumped = policy_summary(*spec, 0).dump();
  EXPECT_NE(std::string::npos, dumped.find("\"filed\"")) << dumped;  // the neighbour: the name is there
  EXPECT_NE(std::string::npos, dumped.find("\"FILED\"")) << dumped;
  EXPECT_EQ(std::string::npos, dumped.find("do-not-leak")) << dumped;
  // Where the secret comes from is none of the sandbox's business either.
  EXPECT_EQ(std::string::npos, dumped.find("SECRET_TOKEN")) << dumped;
  EXPECT_EQ(std::string::npos, dumped.find(".config/gh/token")) << dumped;
  EXPECT_EQ(std::string::npos, dumped.find("oishell-cred-")) << dumped;  // no placeholder
}

TEST(PolicySummary, UdpRulesAndNoRules) {
  auto spec = compile_text("version: 1\nnetwork:\n  allow:\n    - {host: ntp.example, ports: [123], protocol: udp}\n");
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  json s = policy_summary(*spec, 0);
  EXPECT_EQ(json({{"rule", "ntp.example:123"}, {"protocol", "udp"}, {"tls", "passthrough"}}), s["network_rules"][0]);
  auto none = compile_text("version: 1\nnetwork: {mode: none}\n");
  ASSERT_TRUE(none.is_ok()) << none.status().message();
  EXPECT_EQ(json::array(), policy_summary(*none, 0)["network_rules"]);
  EXPECT_EQ("none", policy_summary(*none, 0)["network"]);
}

}  // namespace
}  // namespace oishell::testing
