// HTTPS rules (issue 16) in the policy: `tls: terminate`, `methods`, `paths`, `credentials`, `upstream_ca` parsed,
// validated against the rest of the rule and the policy, compiled, explained, diffed and written as JSON.
#include <gtest/gtest.h>

#include <algorithm>

#include "policy/compiler.h"
#include "policy/explain.h"
#include "policy/schema.h"
#include "policy/spec_json.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

Result<SandboxSpec> compile_text(const std::string& text) {
  auto r = load_text(text);
  if (!r.ok()) return Status::error(policy::format_diagnostics(r.errors));
  return policy::compile(r.policy, fake_context());
}

const char kGithub[] = R"(version: 1
network:
  allow:
    - host: api.github.com
      ports: [443]
      tls: terminate
      methods: [get, HEAD]
      paths: ["/repos/**", /user]
      credentials:
        - {name: github, env: GITHUB_TOKEN, scheme: Bearer, from_env: GH_TOKEN}
)";

TEST(HttpsRules, ATerminatingRuleIsParsedAndCompiled) {
  auto spec = compile_text(kGithub);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  ASSERT_EQ(1u, spec->network.allow.size());
  const HostRule& r = spec->network.allow[0];
  EXPECT_EQ(HostRule::Tls::terminate, r.tls);
  EXPECT_EQ((std::vector<std::string>{"GET", "HEAD"}), r.methods);  // normalised to upper case
  EXPECT_EQ((std::vector<std::string>{"/repos/**", "/user"}), r.paths);
  ASSERT_EQ(1u, r.credentials.size());
  EXPECT_EQ("github", r.credentials[0].name);
  EXPECT_EQ("GITHUB_TOKEN", r.credentials[0].env);
  EXPECT_EQ("Authorization", r.credentials[0].header);  // the default header
  EXPECT_EQ("Bearer", r.credentials[0].scheme);
  EXPECT_EQ("GH_TOKEN", r.credentials[0].from_env);
  // The neighbour: a rule without the keys stays a passthrough rule.
  auto plain = compile_text("version: 1\nnetwork: {allow: [api.github.com]}\n");
  ASSERT_TRUE(plain.is_ok());
  EXPECT_EQ(HostRule::Tls::passthrough, plain->network.allow[0].tls);
}

TEST(HttpsRules, RequestKeysNeedTlsTerminate) {
  for (const char* key : {"methods: [GET]", "paths: [\"/a\"]", "upstream_ca: /etc/ssl/internal-ca.pem",
                          "credentials: [{name: a, env: A, from_env: B}]"}) {
    std::string e = errors_of(std::string("version: 1\nnetwork:\n  allow:\n    - {host: api.example.com, ") + key +
                              "}\n");
    EXPECT_TRUE(contains(e, "needs `tls: terminate` on the same rule")) << key << ": " << e;
    EXPECT_TRUE(contains(e, "a credential's placeholder would reach the server as it is")) << e;
    // tls: passthrough said out loud is the same refusal.
    e = errors_of(std::string("version: 1\nnetwork:\n  allow:\n    - {host: api.example.com, tls: passthrough, ") +
                  key + "}\n");
    EXPECT_TRUE(contains(e, "needs `tls: terminate` on the same rule")) << key << ": " << e;
    // The neighbour: with tls: terminate the same key is valid.
    e = errors_of(std::string("version: 1\nnetwork:\n  allow:\n    - {host: api.example.com, tls: terminate, ") +
                  key + "}\n");
    EXPECT_EQ("", e) << key;
  }
}

TEST(HttpsRules, TerminateNeedsANameTcpAndInspection) {
  EXPECT_TRUE(contains(errors_of("version: 1\nnetwork:\n  allow: [{host: 192.0.2.1, tls: terminate}]\n"),
                       "`tls: terminate` needs a host name, not an address"));
  EXPECT_TRUE(contains(
      errors_of("version: 1\nnetwork:\n  allow: [{host: x.example, ports: [53], protocol: udp, tls: terminate}]\n"),
      "`tls: terminate` is for tcp rules"));
  EXPECT_TRUE(contains(errors_of("version: 1\nnetwork:\n  allow: [{host: x.example, inspect: false, tls: terminate}]\n"),
                       "`inspect: false` and `tls: terminate` contradict each other"));
  EXPECT_TRUE(contains(errors_of("version: 1\nnetwork:\n  allow: [{host: x.example, tls: decrypt}]\n"),
                       "unknown tls mode `decrypt`"));
  EXPECT_TRUE(contains(errors_of("version: 1\nnetwork:\n  deny: [{host: x.example, tls: terminate}]\n"),
                       "`tls` only applies to allow rules"));
  // The neighbour: a suffix rule may terminate (a certificate per name it covers).
  EXPECT_EQ("", errors_of("version: 1\nnetwork:\n  allow: [{host: \"*.example.org\", tls: terminate}]\n"));
}

TEST(HttpsRules, MethodsAndPathsAreChecked) {
  std::string e = errors_of(
      "version: 1\nnetwork:\n  allow: [{host: x.example, tls: terminate, methods: [\"G T\"], paths: [repos]}]\n");
  EXPECT_TRUE(contains(e, "network.allow[0].methods[0]")) << e;
  EXPECT_TRUE(contains(e, "network.allow[0].paths[0]")) << e;
}

TEST(HttpsRules, ASecretNeverComesFromThePolicyText) {
  // No key holds a secret: `value` is an unknown key.
  std::string e = errors_of(
      "version: 1\nnetwork:\n  allow: [{host: x.example, tls: terminate, credentials: [{name: a, env: A, value: "
      "s3cret}]}]\n");
  EXPECT_TRUE(contains(e, "network.allow[0].credentials[0]")) << e;
  EXPECT_TRUE(contains(e, "value")) << e;
  // Exactly one source.
  e = errors_of("version: 1\nnetwork:\n  allow: [{host: x.example, tls: terminate, credentials: [{name: a, env: A}]}]\n");
  EXPECT_TRUE(contains(e, "from exactly one of `from_env` and `from_file`")) << e;
  e = errors_of(
      "version: 1\nnetwork:\n  allow: [{host: x.example, tls: terminate, credentials: [{name: a, env: A, from_env: B, "
      "from_file: /etc/passwd}]}]\n");
  EXPECT_TRUE(contains(e, "from exactly one of `from_env` and `from_file`")) << e;
  e = errors_of(
      "version: 1\nnetwork:\n  allow: [{host: x.example, tls: terminate, credentials: [{name: Bad!, env: 1A, header: "
      "\"X Y\", from_env: B}]}]\n");
  EXPECT_TRUE(contains(e, "credential name `Bad!`")) << e;
  EXPECT_TRUE(contains(e, "`1A` is not an environment variable name")) << e;
  EXPECT_TRUE(contains(e, "`X Y` is not an HTTP token")) << e;
}

TEST(HttpsRules, ASecretsFileTheSandboxCanReadIsRefused) {
  auto visible = compile_text(
      "version: 1\nnetwork:\n  allow: [{host: x.example, tls: terminate, credentials: [{name: a, env: A, from_file: "
      "$WORKSPACE/.envrc}]}]\n");
  ASSERT_FALSE(visible.is_ok());
  EXPECT_TRUE(contains(visible.status().message(),
                       "credential a: its secret's file /home/user/project/.envrc is visible inside the sandbox"))
      << visible.status().message();
  auto missing = compile_text(
      "version: 1\nnetwork:\n  allow: [{host: x.example, tls: terminate, credentials: [{name: a, env: A, from_file: "
      "~/.config/gh/missing}]}]\n");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_TRUE(contains(missing.status().message(), "is not a file on this host")) << missing.status().message();
  // The neighbour: a file outside every path the sandbox sees.
  auto outside = compile_text(
      "version: 1\nnetwork:\n  allow: [{host: x.example, tls: terminate, credentials: [{name: a, env: A, from_file: "
      "~/.config/gh/token}]}]\n");
  ASSERT_TRUE(outside.is_ok()) << outside.status().message();
  EXPECT_EQ("/home/user/.config/gh/token", outside->network.allow[0].credentials[0].from_file);
}

TEST(HttpsRules, OneNameIsOneCredentialAndItsVariableIsItsOwn) {
  const std::string rule_a = "{host: a.example, tls: terminate, credentials: [{name: gh, env: T, from_env: S}]}";
  // The same definition on two rules: one credential for both hosts.
  EXPECT_TRUE(compile_text("version: 1\nnetwork:\n  allow: [" + rule_a + ", " +
                           "{host: b.example, tls: terminate, credentials: [{name: gh, env: T, from_env: S}]}]\n")
                  .is_ok());
  auto twice = compile_text("version: 1\nnetwork:\n  allow: [" + rule_a + ", " +
                            "{host: b.example, tls: terminate, credentials: [{name: gh, env: T, from_env: OTHER}]}]\n");
  ASSERT_FALSE(twice.is_ok());
  EXPECT_TRUE(contains(twice.status().message(), "credential gh is defined twice, differently"));
  auto shared_variable = compile_text("version: 1\nnetwork:\n  allow: [" + rule_a + ", " +
                                      "{host: b.example, tls: terminate, credentials: [{name: other, env: T, "
                                      "from_env: S}]}]\n");
  ASSERT_FALSE(shared_variable.is_ok());
  EXPECT_TRUE(contains(shared_variable.status().message(), "the variable T is already set by credential gh"));
  auto env_set = compile_text("version: 1\nenv: {set: {T: x}}\nnetwork:\n  allow: [" + rule_a + "]\n");
  ASSERT_FALSE(env_set.is_ok());
  EXPECT_TRUE(contains(env_set.status().message(), "the variable T is already set by env.set or env.pass"));
}

// Issue 33, finding 8: the three ways a credential rule could hand its secret away or lose its checks in silence.
TEST(HttpsRules, CredentialFootgunsAreRefused) {
  // A wildcard lets the sandbox pick which host receives the secret.
  auto wildcard = compile_text(
      "version: 1\nnetwork:\n  allow: [{host: \"*.example.com\", tls: terminate, credentials: [{name: a, env: A, "
      "from_env: S}]}]\n");
  ASSERT_FALSE(wildcard.is_ok());
  EXPECT_TRUE(contains(wildcard.status().message(), "credentials need an exact host, not `*.example.com`"))
      << wildcard.status().message();
  // A wildcard terminate rule without credentials (methods only) is fine.
  EXPECT_TRUE(compile_text("version: 1\nnetwork:\n  allow: [{host: \"*.example.com\", tls: terminate, methods: "
                           "[GET]}]\n")
                  .is_ok());

  // The secret's own variable passed into the sandbox.
  auto passed = compile_text(
      "version: 1\nenv: {pass: [S]}\nnetwork:\n  allow: [{host: a.example, tls: terminate, credentials: [{name: a, "
      "env: A, from_env: S}]}]\n");
  ASSERT_FALSE(passed.is_ok());
  EXPECT_TRUE(contains(passed.status().message(),
                       "credential a: its secret's variable S is also passed into the sandbox (env.pass), where any "
                       "code could read it"))
      << passed.status().message();
  EXPECT_TRUE(compile_text("version: 1\nenv: {pass: [OTHER]}\nnetwork:\n  allow: [{host: a.example, tls: terminate, "
                           "credentials: [{name: a, env: A, from_env: S}]}]\n")
                  .is_ok());

  // A passthrough rule matching the same host cancels the terminated rule's paths and credentials.
  for (const char* wide : {"api.example.com", "\"*.example.com\"", "{host: api.example.com, ports: [443]}"}) {
    auto cancelled = compile_text(std::string("version: 1\nnetwork:\n  allow:\n    - {host: api.example.com, ports: "
                                              "[443], tls: terminate, paths: [/v1/**]}\n    - ") +
                                  wide + "\n");
    ASSERT_FALSE(cancelled.is_ok()) << wide;
    EXPECT_TRUE(contains(cancelled.status().message(),
                         "`api.example.com:443` terminates TLS for its methods, paths or credentials, but the "
                         "passthrough rule"))
        << cancelled.status().message();
  }
  // Neighbours: a passthrough rule for another port, another host or the bare parent domain leaves it alone.
  for (const char* wide : {"{host: api.example.com, ports: [8443]}", "www.example.com", "example.com"}) {
    auto apart = compile_text(std::string("version: 1\nnetwork:\n  allow:\n    - {host: api.example.com, ports: "
                                          "[443], tls: terminate, paths: [/v1/**]}\n    - ") +
                              wide + "\n");
    EXPECT_TRUE(apart.is_ok()) << wide << ": " << apart.status().message();
  }
}

TEST(HttpsRules, UpstreamCaIsAFileOnTheHost) {
  auto ok = compile_text(
      "version: 1\nnetwork:\n  allow: [{host: svc.internal.example, tls: terminate, upstream_ca: "
      "/etc/ssl/internal-ca.pem}]\n");
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ("/etc/ssl/internal-ca.pem", ok->network.allow[0].upstream_ca);
  auto missing = compile_text(
      "version: 1\nnetwork:\n  allow: [{host: svc.internal.example, tls: terminate, upstream_ca: /etc/ssl/none.pem}]\n");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_TRUE(contains(missing.status().message(), "upstream_ca: /etc/ssl/none.pem is not a file"));
}

TEST(HttpsRules, CompiledJsonKeepsTheRulesAndNoSecret) {
  auto spec = compile_text(kGithub);
  ASSERT_TRUE(spec.is_ok());
  auto json = spec_to_json(*spec);
  const auto& rule = json["network"]["allow"][0];
  EXPECT_EQ("terminate", rule["tls"]);
  EXPECT_EQ("GH_TOKEN", rule["credentials"][0]["from_env"]);
  auto back = spec_from_json(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(spec->network.allow[0], back->network.allow[0]);
}

TEST(HttpsRules, ExplainSaysWhatIsReadAndWhatIsAdded) {
  auto r = load_text(kGithub);
  ASSERT_TRUE(r.ok());
  auto spec = policy::compile(r.policy, fake_context());
  ASSERT_TRUE(spec.is_ok());
  std::string e = policy::explain(r.policy, *spec);
  EXPECT_TRUE(contains(e, "HTTPS read request by request (tls: terminate): api.github.com on port 443: TLS ended by "
                          "the relay"))
      << e;
  EXPECT_TRUE(contains(e, "only GET, HEAD, to paths /repos/**, /user")) << e;
  EXPECT_TRUE(contains(e, "carry the credential `github` in Authorization as `Bearer ...`, its secret from oishell's "
                          "variable GH_TOKEN outside; inside, GITHUB_TOKEN holds only a placeholder"))
      << e;
  // The neighbour: a policy without such a rule says nothing of it.
  auto plain = load_text("version: 1\nnetwork: {allow: [api.github.com]}\n");
  auto plain_spec = policy::compile(plain.policy, fake_context());
  ASSERT_TRUE(plain_spec.is_ok());
  EXPECT_FALSE(contains(policy::explain(plain.policy, *plain_spec), "tls: terminate"));
}

TEST(HttpsRules, DiffShowsWhatEachSideLetsThrough) {
  auto terminated = compile_text(kGithub);
  auto wider = compile_text(R"(version: 1
network:
  allow:
    - host: api.github.com
      ports: [443]
      tls: terminate
      methods: [GET, HEAD, POST]
      paths: ["/repos/**", /user]
      credentials:
        - {name: github, env: GITHUB_TOKEN, scheme: Bearer, from_env: GH_TOKEN}
        - {name: extra, env: EXTRA_TOKEN, from_env: EXTRA}
)");
  auto passthrough = compile_text("version: 1\nnetwork: {allow: [\"api.github.com:443\"]}\n");
  ASSERT_TRUE(terminated.is_ok() && wider.is_ok() && passthrough.is_ok());
  auto d = policy::diff_specs(*terminated, *wider);
  EXPECT_EQ((std::vector<std::string>{"network: api.github.com:443: methods POST",
                                      "network: api.github.com:443: credentials extra"}),
            d.only_b);
  EXPECT_TRUE(d.only_a.empty());
  d = policy::diff_specs(*terminated, *passthrough);
  EXPECT_EQ((std::vector<std::string>{"network: allow api.github.com:443 without reading its requests (the other "
                                      "terminates TLS and checks each request)"}),
            d.only_b);
}

TEST(HttpsRules, SchemaDescribesTheKeys) {
  std::string schema = policy::policy_schema().dump();
  for (const char* key : {"\"tls\"", "\"methods\"", "\"paths\"", "\"credentials\"", "\"upstream_ca\"", "\"from_file\""}) {
    EXPECT_TRUE(contains(schema, key)) << key;
  }
}

}  // namespace
}  // namespace oishell::testing
