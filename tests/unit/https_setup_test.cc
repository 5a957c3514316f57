// prepare_https (issue 16): what a sandbox with terminating rules gets before it starts; nothing for one without.
#include "runtime/outside/https_setup.h"

#include <gtest/gtest.h>

#include <map>

#include "policy/compiler.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

struct Outside {
  std::map<std::string, std::string> env, files;
  relay::SandboxCredentials::Environment environment() const {
    return [this](const std::string& n) -> std::optional<std::string> {
      auto it = env.find(n);
      return it == env.end() ? std::nullopt : std::optional(it->second);
    };
  }
  relay::SandboxCredentials::FileReader reader() const {
    return [this](const std::string& p, size_t max) -> std::optional<std::string> {
      auto it = files.find(p);
      return it == files.end() ? std::nullopt : std::optional(it->second.substr(0, max));
    };
  }
};

const char kPolicy[] = R"(version: 1
network:
  allow:
    - {host: api.github.com, ports: [443], tls: terminate, credentials: [{name: github, env: GITHUB_TOKEN, scheme: Bearer, from_env: GH_TOKEN}]}
    - {host: "*.example.org", tls: terminate}
    - example.net
)";

std::string env_of(const SandboxSpec& spec, const std::string& name) {
  for (const auto& [k, v] : spec.env) {
    if (k == name) return v;
  }
  return "<unset>";
}

TEST(HttpsSetup, TheSandboxGetsTheBundleTheVariablesAndThePlaceholders) {
  SandboxSpec spec = compiled_spec(kPolicy);
  const size_t mounts_before = spec.mounts.size();
  Outside outside{{{"GH_TOKEN", "ghp_s3cret"}},
                  {{"/etc/pki/tls/certs/ca-bundle.crt", "-----BEGIN CERTIFICATE-----\nSYSTEM\n-----END CERTIFICATE-----\n"}}};
  auto setup = prepare_https(spec, outside.environment(), outside.reader());
  ASSERT_TRUE(setup.is_ok()) << setup.status().message();
  ASSERT_TRUE(setup->has_value());
  const HttpsSetup& s = **setup;
  EXPECT_EQ("/etc/pki/tls/certs/ca-bundle.crt", s.bundle_path);  // the first bundle this host has
  ASSERT_EQ(mounts_before + 1, spec.mounts.size());
  const MountStep& bundle = spec.mounts.back();
  EXPECT_EQ(MountStep::Kind::file, bundle.kind);
  EXPECT_EQ(s.bundle_path, bundle.target);
  EXPECT_TRUE(bundle.source.starts_with("-----BEGIN CERTIFICATE-----\nSYSTEM\n")) << bundle.source;
  EXPECT_TRUE(bundle.source.ends_with(s.authority->certificate_pem()));
  for (const char* variable : relay::kTrustBundleVariables) EXPECT_EQ(s.bundle_path, env_of(spec, variable)) << variable;
  const std::string placeholder = env_of(spec, "GITHUB_TOKEN");
  EXPECT_TRUE(placeholder.starts_with("oishell-cred-github-")) << placeholder;
  for (const auto& [k, v] : spec.env) EXPECT_EQ(std::string::npos, v.find("s3cret")) << k;
  // The authority signs for the terminated names only.
  EXPECT_TRUE(s.authority->leaf_for("api.github.com").is_ok());
  EXPECT_TRUE(s.authority->leaf_for("www.example.org").is_ok());
  EXPECT_FALSE(s.authority->leaf_for("example.net").is_ok());
}

TEST(HttpsSetup, NothingWithoutATerminatingRuleAndFailsClosedOtherwise) {
  SandboxSpec plain = compiled_spec("version: 1\nnetwork: {allow: [api.github.com]}\n");
  const auto env_before = plain.env;
  Outside none;
  auto nothing = prepare_https(plain, none.environment(), none.reader());
  ASSERT_TRUE(nothing.is_ok());
  EXPECT_FALSE(nothing->has_value());
  EXPECT_EQ(env_before, plain.env);
  // No system bundle to extend.
  SandboxSpec spec = compiled_spec(kPolicy);
  Outside no_bundle{{{"GH_TOKEN", "t"}}, {}};
  auto refused = prepare_https(spec, no_bundle.environment(), no_bundle.reader());
  ASSERT_FALSE(refused.is_ok());
  EXPECT_TRUE(refused.status().message().starts_with("tls: terminate extends the system's trust bundle"))
      << refused.status().message();
  // A secret that is not there.
  SandboxSpec again = compiled_spec(kPolicy);
  Outside no_secret{{}, {{"/etc/ssl/certs/ca-certificates.crt", "x\n"}}};
  auto missing = prepare_https(again, no_secret.environment(), no_secret.reader());
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ("credential github: its secret could not be read from oishell's variable GH_TOKEN (it is not set)",
            missing.status().message());
  // A bundle variable the policy sets itself.
  SandboxSpec own = compiled_spec(std::string(kPolicy) + "env: {set: {SSL_CERT_FILE: /mine.pem}}\n");
  Outside ok{{{"GH_TOKEN", "t"}}, {{"/etc/ssl/certs/ca-certificates.crt", "x\n"}}};
  auto clash = prepare_https(own, ok.environment(), ok.reader());
  ASSERT_FALSE(clash.is_ok());
  EXPECT_EQ("tls: terminate sets SSL_CERT_FILE in the sandbox, which the policy sets as well (env)",
            clash.status().message());
}

}  // namespace
}  // namespace oishell::testing
