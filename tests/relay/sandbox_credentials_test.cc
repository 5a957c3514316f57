// SandboxCredentials: placeholders made per sandbox, secrets read outside and refused when they cannot be used,
// never in a message; the trust bundle the sandbox reads.
#include "runtime/relay/sandbox_credentials.h"

#include <gtest/gtest.h>

#include <map>

namespace oishell::relay {
namespace {

HostRule terminating(const std::string& host, std::vector<HttpCredential> credentials) {
  auto rule = HostRule::parse(host);
  EXPECT_TRUE(rule.is_ok());
  rule->tls = HostRule::Tls::terminate;
  rule->credentials = std::move(credentials);
  return *rule;
}

HttpCredential from_env(const std::string& name, const std::string& env, const std::string& source) {
  HttpCredential c;
  c.name = name;
  c.env = env;
  c.scheme = "Bearer";
  c.from_env = source;
  return c;
}

HttpCredential from_file(const std::string& name, const std::string& env, const std::string& path) {
  HttpCredential c;
  c.name = name;
  c.env = env;
  c.from_file = path;
  return c;
}

struct FakeOutside {
  std::map<std::string, std::string> env, files;
  SandboxCredentials::Environment environment() const {
    return [this](const std::string& name) -> std::optional<std::string> {
      auto it = env.find(name);
      return it == env.end() ? std::nullopt : std::optional(it->second);
    };
  }
  SandboxCredentials::FileReader reader() const {
    return [this](const std::string& path, size_t max) -> std::optional<std::string> {
      auto it = files.find(path);
      return it == files.end() ? std::nullopt : std::optional(it->second.substr(0, max));
    };
  }
};

TEST(SandboxCredentials, EachCredentialGetsAPlaceholderOfItsOwnAndItsSecret) {
  NetworkSpec net;
  net.allow = {terminating("api.github.com", {from_env("github", "GITHUB_TOKEN", "GH_TOKEN")}),
               terminating("uploads.github.com", {from_env("github", "GITHUB_TOKEN", "GH_TOKEN")}),
               terminating("svc.example", {from_file("svc", "SVC_KEY", "/secrets/svc")})};
  FakeOutside outside{{{"GH_TOKEN", "ghp_s3cret+/="}}, {{"/secrets/svc", "key-123\n"}}};
  auto loaded = SandboxCredentials::load(net, outside.environment(), outside.reader());
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  ASSERT_EQ(2u, loaded->environment().size());  // one credential, however many rules use it
  EXPECT_EQ("GITHUB_TOKEN", loaded->environment()[0].first);
  const std::string& placeholder = loaded->environment()[0].second;
  EXPECT_TRUE(placeholder.starts_with("oishell-cred-github-")) << placeholder;
  EXPECT_EQ(std::string("oishell-cred-github-").size() + 32, placeholder.size());
  EXPECT_EQ(std::string::npos, placeholder.find("s3cret"));
  auto bound = loaded->bindings_for(net.allow[1]);
  ASSERT_EQ(1u, bound.size());
  EXPECT_EQ(placeholder, bound[0].placeholder);
  EXPECT_EQ("ghp_s3cret+/=", bound[0].secret);  // verbatim
  EXPECT_EQ("Authorization", bound[0].header);
  EXPECT_EQ("Bearer", bound[0].scheme);
  auto svc = loaded->bindings_for(net.allow[2]);
  ASSERT_EQ(1u, svc.size());
  EXPECT_EQ("key-123", svc[0].secret);  // the file's trailing newline is not part of it
  EXPECT_EQ(2u, loaded->all_placeholders().size());
  // A second sandbox gets other placeholders.
  auto again = SandboxCredentials::load(net, outside.environment(), outside.reader());
  ASSERT_TRUE(again.is_ok());
  EXPECT_NE(placeholder, again->environment()[0].second);
}

TEST(SandboxCredentials, AnUnusableSecretStopsTheSandboxWithoutShowingIt) {
  NetworkSpec net;
  net.allow = {terminating("api.github.com", {from_env("github", "GITHUB_TOKEN", "GH_TOKEN")})};
  FakeOutside unset;
  auto missing = SandboxCredentials::load(net, unset.environment(), unset.reader());
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ("credential github: its secret could not be read from oishell's variable GH_TOKEN (it is not set)",
            missing.status().message());
  for (const std::string& bad : {std::string(""), std::string("two\nlines-s3cret"), std::string(" s3cret")}) {
    FakeOutside outside{{{"GH_TOKEN", bad}}, {}};
    auto refused = SandboxCredentials::load(net, outside.environment(), outside.reader());
    ASSERT_FALSE(refused.is_ok()) << bad;
    EXPECT_TRUE(refused.status().message().starts_with("credential github: ")) << refused.status().message();
    EXPECT_EQ(std::string::npos, refused.status().message().find("s3cret")) << refused.status().message();
  }
  // A rule that does not terminate carries no credential into the sandbox (the policy refuses the combination;
  // here, nothing is read for it).
  NetworkSpec passthrough;
  passthrough.allow = {terminating("api.github.com", {from_env("github", "GITHUB_TOKEN", "GH_TOKEN")})};
  passthrough.allow[0].tls = HostRule::Tls::passthrough;
  auto none = SandboxCredentials::load(passthrough, unset.environment(), unset.reader());
  ASSERT_TRUE(none.is_ok());
  EXPECT_TRUE(none->empty());
}

TEST(SandboxCredentials, AFileTooLongForASecretIsRefused) {
  NetworkSpec net;
  net.allow = {terminating("svc.example", {from_file("svc", "SVC_KEY", "/secrets/svc")})};
  FakeOutside big{{}, {{"/secrets/svc", std::string(kMaxSecretBytes + 10, 'k')}}};
  auto refused = SandboxCredentials::load(net, big.environment(), big.reader());
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ("credential svc: the file /secrets/svc holds more than 16384 bytes, more than a secret for a header",
            refused.status().message());
  FakeOutside exact{{}, {{"/secrets/svc", std::string(kMaxSecretBytes, 'k') + "\n"}}};
  EXPECT_TRUE(SandboxCredentials::load(net, exact.environment(), exact.reader()).is_ok());
}

TEST(SandboxCredentials, TheTrustBundleKeepsTheSystemsAndAddsTheSandboxAuthority) {
  const std::string system = "-----BEGIN CERTIFICATE-----\nSYSTEM\n-----END CERTIFICATE-----";  // no final newline
  const std::string ours = "-----BEGIN CERTIFICATE-----\nOURS\n-----END CERTIFICATE-----\n";
  std::string bundle = compose_trust_bundle(system, ours);
  EXPECT_TRUE(bundle.starts_with(system + "\n")) << bundle;
  EXPECT_TRUE(bundle.ends_with(ours)) << bundle;
  EXPECT_EQ(ours.size() + system.size() + 1 +
                std::string("# oishell: this sandbox's certificate authority, for the hosts its policy terminates "
                            "(tls: terminate)\n")
                    .size(),
            bundle.size());
}

}  // namespace
}  // namespace oishell::relay
