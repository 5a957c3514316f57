#include "agent/config/profile.h"

#include <gtest/gtest.h>

#include "agent/config/config.h"

namespace oishell::agent {
namespace {

TEST(Profile, OpenInterpreterKeys) {
  auto p = parse_profile(R"(
llm:
  model: gpt-4o
  api_key: sk-test
  api_base: http://127.0.0.1:9/v1
  context_window: 32000
  max_tokens: 900
  supports_functions: false
  temperature: 0.2
auto_run: false
offline: true
custom_instructions: Be brief.
computer:
  languages: [python, shell]
max_output: 1200
version: 0.2.5
sandbox: openshell
policy: strict
)", "/p/default.yaml");
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ("gpt-4o", *p->model);
  EXPECT_EQ("sk-test", *p->api_key);
  EXPECT_EQ(32000, *p->context_window);
  EXPECT_EQ(900, *p->max_tokens);
  EXPECT_FALSE(*p->supports_functions);
  EXPECT_DOUBLE_EQ(0.2, *p->temperature);
  EXPECT_FALSE(*p->auto_run);
  EXPECT_TRUE(*p->offline);
  EXPECT_EQ(1200, *p->max_output);
  EXPECT_EQ((std::vector<std::string>{"python", "shell"}), *p->languages);
  EXPECT_EQ("strict", *p->policy);  // a bare word: a built-in policy profile
  EXPECT_TRUE(p->warnings.empty());
}

TEST(Profile, PolicyFileIsRelativeToTheProfile) {
  auto p = parse_profile("policy: policies/team.yaml\n", "/home/u/.config/open-interpreter/profiles/work.yaml");
  ASSERT_TRUE(p);
  EXPECT_EQ("/home/u/.config/open-interpreter/profiles/policies/team.yaml", *p->policy);
}

TEST(Profile, UnknownKeyIsAnErrorWithLineAndColumn) {
  auto p = parse_profile("llm:\n  model: x\n  modle: y\n", "/p/x.yaml");
  ASSERT_FALSE(p);
  EXPECT_NE(std::string::npos,
            p.status().message().find("/p/x.yaml:3:3: unknown key `llm.modle`; did you mean `llm.model`?"))
      << p.status().message();
}

TEST(Profile, OpenInterpreterKeysWithoutEffectHereAreNotes) {
  auto p = parse_profile("safe_mode: ask\nllm:\n  execution_instructions: x\ndisable_telemetry: true\n", "/p/x.yaml");
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ("ask", *p->safe_mode);  // applied
  ASSERT_EQ(2u, p->notes.size());
  EXPECT_NE(std::string::npos, p->notes[0].find("/p/x.yaml:3:3: `llm.execution_instructions`")) << p->notes[0];
  EXPECT_NE(std::string::npos, p->notes[1].find("no telemetry")) << p->notes[1];
  EXPECT_TRUE(p->warnings.empty());
}

TEST(Profile, BadValuesAreErrors) {
  EXPECT_FALSE(parse_profile("sandbox: docker\n", "p"));
  EXPECT_FALSE(parse_profile("auto_run: perhaps\n", "p"));
  EXPECT_FALSE(parse_profile("max_output: -1\n", "p"));
  EXPECT_FALSE(parse_profile("llm: [1, 2]\n", "p"));
  EXPECT_FALSE(parse_profile("llm: {model: [x]}\n", "p"));
  EXPECT_FALSE(parse_profile("key: [unclosed\n", "p"));
  EXPECT_TRUE(parse_profile("", "p"));  // an empty profile is fine
}

TEST(Config, FlagsBeatTheProfile) {
  auto p = parse_profile("llm:\n  model: from-profile\n  context_window: 1000\nmax_output: 100\nauto_run: false\n", "p");
  ASSERT_TRUE(p);
  CliOptions cli;
  cli.model = "from-flag";
  cli.auto_run = true;
  auto c = merge_config(cli, &*p);
  ASSERT_TRUE(c);
  EXPECT_EQ("from-flag", c->model.model);
  EXPECT_TRUE(c->auto_run);
  EXPECT_EQ(1000, *c->context_window);  // not given as a flag: the profile's
  EXPECT_EQ(100, c->max_output);
}

TEST(Config, AutoRunDefaultsFollowTheSandbox) {
  CliOptions cli;
  auto c = merge_config(cli, nullptr);
  ASSERT_TRUE(c);
  EXPECT_EQ("openshell", c->sandbox);
  EXPECT_TRUE(c->auto_run);
  EXPECT_EQ(2800, c->max_output);
  cli.sandbox = "none";
  c = merge_config(cli, nullptr);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->auto_run);
  cli.sandbox = "docker";
  EXPECT_FALSE(merge_config(cli, nullptr));
}

}  // namespace
}  // namespace oishell::agent
