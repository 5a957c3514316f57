#include "tools/interpreter/cli.h"

#include <gtest/gtest.h>

#include <functional>

#include "tools/interpreter/oi_flags.h"

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
  EXPECT_FALSE(parse({"--no-such-flag"}));
  EXPECT_FALSE(parse({"--safe_mode", "maybe"}));
  EXPECT_FALSE(parse({"-m"}));  // a value is missing
  EXPECT_FALSE(parse({"-lsv", "--no-llm_supports_vision"}));
}

// Every nickname of Open Interpreter 0.4.3's table, alone: it is that one option, never a bundle of others.
TEST(Cli, EveryOpenInterpreterShortFormIsItsOwnOption) {
  struct Case {
    std::vector<const char*> args;
    std::function<bool(const agent::CliOptions&)> parsed;
  };
  const std::vector<Case> cases = {
      {{"-p", "work"}, [](const auto& o) { return o.profile == "work"; }},
      {{"-ci", "be brief"}, [](const auto& o) { return o.custom_instructions == "be brief"; }},
      {{"-sm", "you are"}, [](const auto& o) { return o.system_message == "you are"; }},
      {{"-y"}, [](const auto& o) { return o.auto_run == true; }},
      {{"-nhl"}, [](const auto& o) { return o.no_highlight_active_line && !o.local && !o.stdin_prompt; }},
      {{"-v"}, [](const auto& o) { return o.verbose; }},
      {{"-m", "gpt-4o"}, [](const auto& o) { return o.model == "gpt-4o"; }},
      {{"-t", "0.2"}, [](const auto& o) { return o.temperature == 0.2; }},
      {{"-lsv"}, [](const auto& o) { return o.supports_vision == true && !o.local && !o.stdin_prompt && !o.verbose; }},
      {{"-lsf"}, [](const auto& o) { return o.supports_functions == true; }},
      {{"-cw", "8000"}, [](const auto& o) { return o.context_window == 8000; }},
      {{"-x", "300"}, [](const auto& o) { return o.max_tokens == 300; }},
      {{"-b", "0.5"}, [](const auto& o) { return o.max_budget == 0.5; }},
      {{"-ab", "http://127.0.0.1:9/v1"}, [](const auto& o) { return o.api_base == "http://127.0.0.1:9/v1"; }},
      {{"-ak", "sk-x"}, [](const auto& o) { return o.api_key == "sk-x"; }},
      {{"-av", "2024-06-01"}, [](const auto& o) { return o.api_version == "2024-06-01"; }},
      {{"-xo", "99"}, [](const auto& o) { return o.max_output == 99; }},
      {{"-dt"}, [](const auto& o) { return o.disable_telemetry && o.notes.size() == 1; }},
      {{"-o"}, [](const auto& o) { return o.offline && !o.stdin_prompt; }},
      {{"-sp"}, [](const auto& o) { return o.speak_messages && !o.stdin_prompt && !o.profile; }},
      {{"-safe", "ask"}, [](const auto& o) { return o.safe_mode == "ask"; }},
      {{"-debug"}, [](const auto& o) { return o.debug && !o.profile; }},
      {{"-f"}, [](const auto& o) { return o.profile == "fast"; }},
      {{"-ml"}, [](const auto& o) { return o.multi_line && !o.model; }},
      {{"-l"}, [](const auto& o) { return o.local; }},
      {{"-vi"}, [](const auto& o) { return o.profile == "vision" && !o.verbose; }},
      {{"-os"}, [](const auto& o) { return o.profile == "os" && !o.offline && !o.stdin_prompt; }},
      {{"-pl"}, [](const auto& o) { return o.plain && !o.profile; }},
      {{"-s"}, [](const auto& o) { return o.stdin_prompt; }},
  };
  size_t nicknames = 0;
  for (const auto& f : flag_table()) nicknames += f.open_interpreter && !f.nickname.empty();
  EXPECT_EQ(nicknames, cases.size()) << "a nickname of OI's table has no case here";
  for (const auto& c : cases) {
    auto o = parse(c.args);
    ASSERT_TRUE(o) << c.args[0] << ": " << o.status().message();
    EXPECT_TRUE(c.parsed(*o)) << c.args[0] << " parsed to something else";
    EXPECT_TRUE(o->prompt.empty()) << c.args[0];
  }
}

TEST(Cli, EveryOpenInterpreterLongFlagIsAccepted) {
  for (const auto& f : flag_table()) {
    if (!f.open_interpreter) continue;
    std::vector<std::string> words = {"--" + std::string(f.name)};
    if (f.kind == FlagKind::value) words.push_back(f.name == "safe_mode" ? "auto" : f.name.ends_with("budget") ||
                                                   f.name == "temperature" ? "0.5" : f.name.find("max") !=
                                                   std::string_view::npos || f.name == "context_window" ? "10"
                                                   : "word");
    std::vector<const char*> args;
    for (const auto& w : words) args.push_back(w.c_str());
    auto o = parse(args);
    EXPECT_TRUE(o) << words[0] << ": " << o.status().message();
  }
}

TEST(Cli, LongFormsAsArgparseReadsThem) {
  auto o = parse({"--model=gpt-4o", "-mclaude-3-5-sonnet", "--mod", "x"});  // the last one wins
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ("x", *o->model);
  o = parse({"-m=gpt-4o", "--temp", "0.7", "--no-llm_supports_vision"});
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ("gpt-4o", *o->model);
  EXPECT_EQ(0.7, *o->temperature);
  EXPECT_EQ(false, *o->supports_vision);
  auto ambiguous = parse({"--max", "3"});
  ASSERT_FALSE(ambiguous);
  EXPECT_NE(std::string::npos, ambiguous.status().message().find("--max_tokens")) << ambiguous.status().message();
  auto combined = parse({"-yv"});
  ASSERT_FALSE(combined);
  EXPECT_NE(std::string::npos, combined.status().message().find("never combined")) << combined.status().message();
  auto typo = parse({"--moddel", "x"});
  ASSERT_FALSE(typo);
  EXPECT_NE(std::string::npos, typo.status().message().find("did you mean --model")) << typo.status().message();
  o = parse({"--debug_mode"});
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->verbose);
  o = parse({"-t", "-0.5"});  // a negative number is a value, not an option
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(-0.5, *o->temperature);
}

TEST(Cli, ResetProfileTakesAnOptionalName) {
  auto o = parse({"--reset_profile"});
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ("", *o->reset_profile);
  o = parse({"--reset_profile", "fast.yaml", "-v"});
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ("fast.yaml", *o->reset_profile);
  EXPECT_TRUE(o->verbose);
  o = parse({"--reset_profile", "-v"});
  ASSERT_TRUE(o);
  EXPECT_EQ("", *o->reset_profile);
}

TEST(Cli, ProfileShortcutsAsOpenInterpreterPicksThem) {
  EXPECT_EQ("codestral-vision", *parse({"--codestral", "--vision"})->profile);
  EXPECT_EQ("llama3-os", *parse({"--llama3", "--os"})->profile);
  EXPECT_EQ("local-vision", *parse({"--local", "--vision"})->profile);
  EXPECT_EQ("groq", *parse({"--groq"})->profile);
  EXPECT_EQ("assistant", *parse({"--assistant"})->profile);
  EXPECT_FALSE(parse({"--local"})->profile.has_value());  // --local finds a server on this machine
}

TEST(Cli, WordsFirstStartAChat) {
  std::vector<const char*> args = {"i", "convert", "a.mp4", "-y", "to", "gif"};
  std::string help;
  auto o = parse_cli(static_cast<int>(args.size()), args.data(), &help);
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_TRUE(o->prompt_then_chat);
  EXPECT_TRUE(o->invoked_as_i);
  EXPECT_FALSE(o->auto_run.has_value());  // as in OI: after a word, everything is the message
  EXPECT_EQ((std::vector<std::string>{"convert", "a.mp4", "-y", "to", "gif"}), o->prompt);
  o = parse({"-y", "count", "lines"});  // flags first: a prompt run once (this agent's scripting form)
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->prompt_then_chat);
}

}  // namespace
}  // namespace oishell::interpreter
