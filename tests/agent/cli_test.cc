#include "tools/interpreter/cli.h"

#include <gtest/gtest.h>

namespace oishell::interpreter {
namespace {

Result<agent::CliOptions> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "interpreter");
  std::string help;
  return parse_cli(static_cast<int>(args.size()), args.data(), &help);
}

TEST(Cli, OpenInterpreterShortFlags) {
  auto o = parse({"-y", "-m", "gpt-4o", "-ab", "http://127.0.0.1:1/v1", "-ak", "k", "-cw", "9000", "-x", "500",
                  "-xo", "100", "-ci", "be nice", "-sm", "sys", "-pl", "-v", "-o", "count", "the", "lines"});
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_TRUE(*o->auto_run);
  EXPECT_EQ("gpt-4o", *o->model);
  EXPECT_EQ("http://127.0.0.1:1/v1", *o->api_base);
  EXPECT_EQ("k", *o->api_key);
  EXPECT_EQ(9000, *o->context_window);
  EXPECT_EQ(500, *o->max_tokens);
  EXPECT_EQ(100, *o->max_output);
  EXPECT_EQ("be nice", *o->custom_instructions);
  EXPECT_EQ("sys", *o->system_message);
  EXPECT_TRUE(o->plain);
  EXPECT_TRUE(o->verbose);
  EXPECT_TRUE(o->offline);
  EXPECT_EQ((std::vector<std::string>{"count", "the", "lines"}), o->prompt);
}

TEST(Cli, SupportsFunctionsBothWays) {
  auto o = parse({"--no-llm_supports_functions"});
  ASSERT_TRUE(o);
  EXPECT_FALSE(*o->supports_functions);
  o = parse({"-lsf"});
  ASSERT_TRUE(o);
  EXPECT_TRUE(*o->supports_functions);
  EXPECT_FALSE(parse({"-lsf", "--no-llm_supports_functions"}));
  o = parse({});
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->supports_functions.has_value());  // unset: the profile or the default decides
}

TEST(Cli, SandboxPolicyJsonTurnsProvider) {
  auto o = parse({"--sandbox", "none", "--policy", "strict", "--json", "--max_turns", "3", "--provider", "anthropic",
                  "--conversations", "-s", "-l", "-p", "work"});
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ("none", *o->sandbox);
  EXPECT_EQ("strict", *o->policy);
  EXPECT_TRUE(o->json);
  EXPECT_EQ(3, *o->max_turns);
  EXPECT_EQ("anthropic", *o->provider);
  EXPECT_TRUE(o->conversations);
  EXPECT_TRUE(o->stdin_prompt);
  EXPECT_TRUE(o->local);
  EXPECT_EQ("work", *o->profile);
}

TEST(Cli, BadValuesAreErrors) {
  EXPECT_FALSE(parse({"--sandbox", "docker"}));
  EXPECT_FALSE(parse({"-cw", "many"}));
  EXPECT_FALSE(parse({"--provider", "acme"}));
  EXPECT_FALSE(parse({"--no-such-flag"}));
}

}  // namespace
}  // namespace oishell::interpreter
