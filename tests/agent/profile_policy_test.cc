// A profile's `policy:` written as a mapping (agent/config/profile_policy.h): the policy text the session hands to the
// sandbox, and the profiles refused because a credential would carry its secret in the profile.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "agent/config/config.h"
#include "agent/config/profile.h"

namespace oishell::agent {
namespace {

constexpr const char* kGithubProfile = R"(llm:
  model: gpt-4o
policy:
  network:
    allow:
      - host: api.github.com
        ports: [443]
        tls: terminate
        methods: [GET, HEAD]
        paths: ["/repos/**", "/user"]
        credentials:
          - {name: github, env: GITHUB_TOKEN, scheme: Bearer, from_env: GITHUB_TOKEN}
)";

TEST(ProfilePolicy, AMappingIsThePolicyItselfOnTopOfTheDefault) {
  auto p = parse_profile(kGithubProfile, "/home/u/.config/open-interpreter/profiles/gh.yaml");
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_FALSE(p->policy);  // not a file or a profile name
  ASSERT_TRUE(p->policy_text);
  YAML::Node doc = YAML::Load(*p->policy_text);
  EXPECT_EQ(1, doc["version"].as<int>());
  EXPECT_EQ("default", doc["extends"].as<std::string>());  // what the agent uses without a policy
  EXPECT_EQ("api.github.com", doc["network"]["allow"][0]["host"].as<std::string>());
  EXPECT_EQ("GITHUB_TOKEN", doc["network"]["allow"][0]["credentials"][0]["from_env"].as<std::string>());
  // The config takes it unless --policy says otherwise.
  auto c = merge_config(CliOptions{}, &*p);
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ("", c->policy);
  EXPECT_EQ(*p->policy_text, c->policy_text);
  CliOptions cli;
  cli.policy = "strict";
  auto overridden = merge_config(cli, &*p);
  ASSERT_TRUE(overridden) << overridden.status().message();
  EXPECT_EQ("strict", overridden->policy);
  EXPECT_EQ("", overridden->policy_text);
}

TEST(ProfilePolicy, ItsOwnVersionAndExtendsAreKeptARelativeExtendsIsTheProfilesDirectory) {
  auto p = parse_profile("policy:\n  version: 1\n  extends: team/base.yaml\n",
                         "/home/u/.config/open-interpreter/profiles/work.yaml");
  ASSERT_TRUE(p) << p.status().message();
  YAML::Node doc = YAML::Load(*p->policy_text);
  EXPECT_EQ("/home/u/.config/open-interpreter/profiles/team/base.yaml", doc["extends"].as<std::string>());
  auto strict = parse_profile("policy: {extends: strict}\n", "/p/x.yaml");
  ASSERT_TRUE(strict) << strict.status().message();
  EXPECT_EQ("strict", YAML::Load(*strict->policy_text)["extends"].as<std::string>());
  // The neighbour: a scalar is still a file or a built-in policy profile.
  auto named = parse_profile("policy: strict\n", "/p/x.yaml");
  ASSERT_TRUE(named);
  EXPECT_EQ("strict", *named->policy);
  EXPECT_FALSE(named->policy_text);
}

// A secret written into the profile refuses it, naming the line, and the secret is not repeated.
TEST(ProfilePolicy, ASecretInTheProfileIsRefused) {
  const std::string secret = "ghp_0123456789abcdefSECRET";
  for (const std::string& credential : {
           "{name: github, env: GITHUB_TOKEN, token: " + secret + "}",
           "{name: github, env: GITHUB_TOKEN, value: " + secret + ", from_env: GH_TOKEN}",
           "{name: github, env: GITHUB_TOKEN, scheme: 'Bearer " + secret + "', from_env: GH_TOKEN}",
           "{name: github, env: GITHUB_TOKEN, from_env: 'Bearer " + secret + "'}",
           "'" + secret + "'",
       }) {
    std::string text = "policy:\n  network:\n    allow:\n      - host: api.github.com\n        tls: terminate\n"
                       "        credentials:\n          - " + credential + "\n";
    auto p = parse_profile(text, "/p/gh.yaml");
    ASSERT_FALSE(p) << credential;
    const std::string& m = p.status().message();
    EXPECT_NE(std::string::npos, m.find("/p/gh.yaml:7:")) << m;
    EXPECT_NE(std::string::npos, m.find("policy.network.allow[0].credentials[0]")) << m;
    EXPECT_NE(std::string::npos, m.find("a profile never holds a secret")) << m;
    EXPECT_NE(std::string::npos, m.find("from_env: VARIABLE")) << m;
    EXPECT_EQ(std::string::npos, m.find(secret)) << m;
  }
  // The neighbour: where the secret comes from, and from a file.
  auto ok = parse_profile("policy:\n  network:\n    allow:\n      - host: api.github.com\n        tls: terminate\n"
                          "        credentials:\n          - {name: a, env: A, header: X-Api-Key, from_file: ~/k}\n",
                          "/p/gh.yaml");
  EXPECT_TRUE(ok) << ok.status().message();
}

// A model's key variable cannot be a credential's source: interpreter keeps it from the supervisor, so the
// sandbox would fail to start with "secret missing"; the profile is refused saying what to do instead.
TEST(ProfilePolicy, AModelsKeyVariableIsRefusedAsACredentialsSource) {
  auto refused = parse_profile("policy:\n  network:\n    allow:\n      - host: api.openai.com\n        tls: terminate\n"
                               "        credentials:\n          - {name: openai, env: OPENAI_API_KEY, "
                               "from_env: OPENAI_API_KEY}\n",
                               "/p/oa.yaml");
  ASSERT_FALSE(refused);
  EXPECT_NE(std::string::npos, refused.status().message().find("/p/oa.yaml:7:")) << refused.status().message();
  EXPECT_NE(std::string::npos, refused.status().message().find("export the key under another name "
                                                               "(SANDBOX_OPENAI_API_KEY)"))
      << refused.status().message();
  // The neighbour: another variable is accepted.
  auto ok = parse_profile("policy:\n  network:\n    allow:\n      - host: api.openai.com\n        tls: terminate\n"
                          "        credentials:\n          - {name: openai, env: OPENAI_API_KEY, "
                          "from_env: SANDBOX_OPENAI_API_KEY}\n",
                          "/p/oa.yaml");
  EXPECT_TRUE(ok) << ok.status().message();
}

// A Python profile's `interpreter.policy = {...}` is the same mapping.
TEST(ProfilePolicy, FromAPythonProfilesSettings) {
  nlohmann::json settings = {
      {"policy", {{"network", {{"allow", {{{"host", "api.github.com"}, {"tls", "terminate"},
                                          {"credentials", {{{"name", "g"}, {"env", "G"}, {"secret", "s3cr3t-xyz"}}}}}}}}}}}};
  auto p = profile_from_settings(settings, "/p/gh.py");
  ASSERT_FALSE(p);
  EXPECT_NE(std::string::npos, p.status().message().find("`secret` is not a credential key")) << p.status().message();
  EXPECT_EQ(std::string::npos, p.status().message().find("s3cr3t-xyz")) << p.status().message();
  settings["policy"]["network"]["allow"][0]["credentials"][0].erase("secret");
  settings["policy"]["network"]["allow"][0]["credentials"][0]["from_env"] = "G_TOKEN";
  auto ok = profile_from_settings(settings, "/p/gh.py");
  ASSERT_TRUE(ok) << ok.status().message();
  EXPECT_NE(std::string::npos, ok->policy_text->find("G_TOKEN"));
}

}  // namespace
}  // namespace oishell::agent
