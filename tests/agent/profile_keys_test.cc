// Open Interpreter's profile keys in both of its styles (a fixture each, tests/agent/profiles/), the checks on
// unknown keys and on the format version, and the built-in profiles.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <set>

#include "agent/host/atomic_file.h"
#include "agent/config/config.h"
#include "agent/config/profile.h"
#include "agent/config/profile_builtin.h"
#include "agent/config/profile_keys.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

// The dotted names a fixture's keys stand for, nested or not (`interpreter.` dropped).
void collect_keys(const YAML::Node& map, const std::string& prefix, std::set<std::string>* out) {
  for (const auto& kv : map) {
    std::string key = prefix.empty() ? kv.first.Scalar() : prefix + "." + kv.first.Scalar();
    if (key.starts_with("interpreter.")) key = key.substr(12);
    if (is_profile_object(key) && key != "wtf" && kv.second.IsMap()) collect_keys(kv.second, key, out);
    else out->insert(key);
  }
}

TEST(ProfileKeys, TheFixturesTogetherCoverEveryKeyAndEveryKeyOfOpenInterpretersDocs) {
  std::set<std::string> seen;
  collect_keys(YAML::LoadFile(test::profile_fixture("nested.yaml")), "", &seen);
  collect_keys(YAML::LoadFile(test::profile_fixture("dotted.yaml")), "", &seen);
  for (const auto& k : profile_keys()) EXPECT_TRUE(seen.count(std::string(k.name))) << k.name << " is in no fixture";
  // The settings Open Interpreter 0.4.3's docs (docs/settings/all-settings.mdx, profiles.mdx) show for profiles.
  for (const char* documented :
       {"llm.model", "llm.temperature", "llm.context_window", "llm.max_tokens", "llm.max_output", "llm.api_base",
        "llm.api_key", "llm.api_version", "llm.supports_functions", "llm.execution_instructions",
        "llm.supports_vision", "llm.custom_instructions", "loop", "os", "verbose", "safe_mode", "auto_run",
        "max_budget", "local", "fast", "custom_instructions", "system_message", "disable_telemetry", "offline",
        "messages", "user_message_template", "always_apply_user_message_template", "code_output_template",
        "empty_code_output_template", "code_output_sender", "computer.offline", "computer.verbose",
        "computer.emit_images", "computer.import_computer_api", "computer.languages", "version"}) {
    EXPECT_NE(nullptr, find_profile_key(documented)) << documented;
    EXPECT_TRUE(seen.count(documented)) << documented;
  }
}

TEST(ProfileKeys, NestedStyleAppliesEverySettingThisAgentHas) {
  auto p = load_profile_file(test::profile_fixture("nested.yaml"));
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ("gpt-4o", *p->model);
  EXPECT_DOUBLE_EQ(0.3, *p->temperature);
  EXPECT_EQ(110000, *p->context_window);
  EXPECT_EQ(4096, *p->max_tokens);
  EXPECT_EQ(1500, *p->max_output);  // llm.max_output
  EXPECT_DOUBLE_EQ(0.25, *p->max_budget);
  EXPECT_EQ("http://127.0.0.1:9/v1", *p->api_base);
  EXPECT_EQ("sk-nested", *p->api_key);
  EXPECT_EQ("2024-02-01", *p->api_version);
  EXPECT_EQ("openai", *p->provider);
  EXPECT_FALSE(*p->supports_functions);
  EXPECT_TRUE(*p->supports_vision);
  EXPECT_EQ((std::vector<std::string>{"python", "shell"}), *p->languages);
  EXPECT_TRUE(*p->loop);
  EXPECT_EQ("Keep going until it is done.", *p->loop_message);
  EXPECT_EQ((std::vector<std::string>{"All done.", "Cannot be done."}), *p->loop_breakers);
  EXPECT_FALSE(p->os);
  EXPECT_TRUE(*p->verbose);
  EXPECT_FALSE(*p->debug);
  EXPECT_EQ("ask", *p->safe_mode);
  EXPECT_TRUE(*p->auto_run);
  EXPECT_FALSE(*p->local);
  EXPECT_FALSE(*p->fast);
  EXPECT_EQ("Be brief.", *p->custom_instructions);  // the top level's beats llm.custom_instructions
  EXPECT_EQ("You are a test.", *p->system_message);
  EXPECT_TRUE(*p->offline);
  EXPECT_EQ("{content} (answer in one line)", *p->user_message_template);
  EXPECT_TRUE(*p->always_apply_user_message_template);
  EXPECT_EQ("Output: {content}", *p->code_output_template);
  EXPECT_EQ("No output.", *p->empty_code_output_template);
  EXPECT_EQ("assistant", *p->code_output_sender);
  EXPECT_TRUE(*p->multi_line);
  EXPECT_TRUE(*p->plain);
  EXPECT_FALSE(*p->highlight_active_line);
  EXPECT_EQ("openshell", *p->sandbox);
  EXPECT_EQ("strict", *p->policy);
  EXPECT_EQ(7, *p->max_turns);
  EXPECT_EQ("0.2.5", *p->version);
  EXPECT_TRUE(p->warnings.empty()) << p->warnings.front();
  // Accepted without effect, one note each: llm.execution_instructions, llm.vision_renderer, llm.fast, 12 under
  // computer (skills.path included), disable_telemetry, messages, speak_messages, wtf.
  EXPECT_EQ(19u, p->notes.size());
  for (const auto& n : p->notes) EXPECT_NE(std::string::npos, n.find("nested.yaml:")) << n;

  CliOptions cli;
  auto c = merge_config(cli, &*p);
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ("2024-02-01", c->model.api_version);
  EXPECT_TRUE(*c->supports_vision);
  EXPECT_DOUBLE_EQ(0.25, *c->max_budget);
  EXPECT_EQ(1500, c->max_output);
  EXPECT_TRUE(c->loop);
  EXPECT_EQ((std::vector<std::string>{"All done.", "Cannot be done."}), c->loop_breakers);
  EXPECT_EQ("Keep going until it is done.", c->loop_message);
  EXPECT_TRUE(c->multi_line);
  EXPECT_TRUE(c->plain);
  EXPECT_FALSE(c->highlight_active_line);
  EXPECT_EQ("ask", c->safe_mode);
  EXPECT_FALSE(c->auto_run);  // safe_mode ask turns auto_run off, as in OI
  EXPECT_EQ("{content} (answer in one line)", c->user_message_template);
  EXPECT_TRUE(c->always_apply_user_message_template);
  EXPECT_EQ("Output: {content}", c->code_output_template);
  EXPECT_EQ("No output.", c->empty_code_output_template);
  EXPECT_EQ("assistant", c->code_output_sender);
  EXPECT_EQ(19u, c->notes.size());
}

TEST(ProfileKeys, DottedStyleAppliesTheSameWay) {
  auto p = load_profile_file(test::profile_fixture("dotted.yaml"));
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ("claude-sonnet-4-5", *p->model);
  EXPECT_DOUBLE_EQ(0, *p->temperature);
  EXPECT_EQ(200000, *p->context_window);  // interpreter.llm.context_window
  EXPECT_EQ(2048, *p->max_tokens);
  EXPECT_EQ("2.0.2", *p->api_version);
  EXPECT_EQ("anthropic", *p->provider);
  EXPECT_TRUE(*p->supports_functions);
  EXPECT_FALSE(*p->supports_vision);
  EXPECT_EQ(900, *p->max_output);
  EXPECT_DOUBLE_EQ(1.5, *p->max_budget);
  EXPECT_EQ((std::vector<std::string>{"python"}), *p->languages);
  EXPECT_TRUE(*p->loop);  // force_task_completion, loop's old name
  EXPECT_EQ((std::vector<std::string>{"Stop."}), *p->loop_breakers);
  EXPECT_TRUE(p->os);
  EXPECT_FALSE(*p->verbose);
  EXPECT_TRUE(*p->debug);
  EXPECT_EQ("off", *p->safe_mode);
  EXPECT_FALSE(*p->auto_run);
  EXPECT_TRUE(*p->local);
  EXPECT_TRUE(*p->fast);
  EXPECT_EQ("From the top level.", *p->custom_instructions);
  EXPECT_EQ("user", *p->code_output_sender);
  EXPECT_EQ("none", *p->sandbox);
  EXPECT_EQ(test::profile_fixture("policies/team.yaml"), *p->policy);  // relative to the profile
  EXPECT_EQ(3, *p->max_turns);
  EXPECT_TRUE(p->warnings.empty()) << p->warnings[0];
  EXPECT_TRUE(p->os);
  EXPECT_EQ("1280x800", p->display_size.value_or(""));
  ASSERT_TRUE(p->harness.has_value());
  EXPECT_EQ("swe-agent", p->harness->name);
  CliOptions cli;
  cli.model = "from-a-flag";
  // Computer use with `sandbox: none` would drive the host's own desktop: refused, saying why.
  auto refused = merge_config(cli, &*p);
  ASSERT_FALSE(refused);
  EXPECT_NE(std::string::npos, refused.status().message().find("--os: computer use runs on a virtual display "
                                                                 "inside the sandbox")) << refused.status().message();
  p->os = false;
  auto c = merge_config(cli, &*p);
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ("from-a-flag", c->model.model);
  EXPECT_TRUE(c->local);
  EXPECT_TRUE(c->debug);
  EXPECT_TRUE(c->verbose);  // debug implies verbose
  EXPECT_EQ("From the top level.", c->custom_instructions);
  EXPECT_TRUE(c->warnings.empty());
}

TEST(ProfileKeys, UnknownKeysAreErrorsWithASuggestion) {
  struct Case {
    const char* yaml;
    const char* expected;
  };
  for (const Case& c : {Case{"modle: x\nversion: 0.2.5\n", "unknown key `modle`; did you mean `llm.model`?"},
                        Case{"model: x\nversion: 0.2.5\n", "unknown key `model`; did you mean `llm.model`?"},
                        Case{"llm.temprature: 1\n", "unknown key `llm.temprature`; did you mean `llm.temperature`?"},
                        Case{"computer:\n  languages_: [python]\n", "did you mean `computer.languages`?"},
                        Case{"interpreter.auto_rn: true\n", "unknown key `auto_run`"},
                        Case{"autorun: true\n", "did you mean `auto_run`?"}}) {
    auto p = parse_profile(c.yaml, "/p/x.yaml");
    if (std::string(c.yaml).starts_with("interpreter.")) {
      ASSERT_FALSE(p) << c.yaml;
      EXPECT_NE(std::string::npos, p.status().message().find("did you mean `auto_run`?")) << p.status().message();
      continue;
    }
    ASSERT_FALSE(p) << c.yaml;
    EXPECT_NE(std::string::npos, p.status().message().find(c.expected)) << p.status().message();
  }
  auto far = parse_profile("completely_unrelated_setting: 1\n", "/p/x.yaml");
  ASSERT_FALSE(far);
  EXPECT_EQ(std::string::npos, far.status().message().find("did you mean")) << far.status().message();
  EXPECT_FALSE(parse_profile("safe_mode: sometimes\n", "p"));
  EXPECT_FALSE(parse_profile("code_output_sender: computer\n", "p"));
  EXPECT_FALSE(parse_profile("loop_breakers: done\n", "p"));
}

TEST(ProfileKeys, AnOlderVersionGetsTheMigrationNoticeAndItsOldNamesAreRead) {
  auto p = parse_profile("version: 0.2.1\nmodel: gpt-4\nlocal: true\ntemperature: 0.5\n", "/p/old.yaml");
  ASSERT_TRUE(p) << p.status().message();
  ASSERT_EQ(1u, p->warnings.size());
  EXPECT_NE(std::string::npos, p->warnings[0].find("format of version 0.2.1")) << p->warnings[0];
  EXPECT_NE(std::string::npos, p->warnings[0].find("migrate")) << p->warnings[0];
  EXPECT_NE(std::string::npos, p->warnings[0].find("version: 0.2.5")) << p->warnings[0];
  EXPECT_EQ("gpt-4", *p->model);             // model -> llm.model
  EXPECT_TRUE(*p->offline);                  // local -> offline (OI's migration)
  EXPECT_FALSE(p->local.has_value());
  EXPECT_DOUBLE_EQ(0.5, *p->temperature);
  // The current version: no notice, and the old names are not keys any more.
  auto current = parse_profile("version: 0.2.5\nllm:\n  model: gpt-4o\n", "/p/new.yaml");
  ASSERT_TRUE(current);
  EXPECT_TRUE(current->warnings.empty());
  // Newer than the agent knows: a warning.
  auto newer = parse_profile("version: 0.3.0\nllm:\n  model: gpt-4o\n", "/p/newer.yaml");
  ASSERT_TRUE(newer) << newer.status().message();
  ASSERT_EQ(1u, newer->warnings.size());
  EXPECT_NE(std::string::npos, newer->warnings[0].find("newer than 0.2.5")) << newer->warnings[0];
  EXPECT_FALSE(parse_profile("version: latest\n", "/p/bad.yaml"));
  // No version: OI's docs' own examples have none; a name that is a key now keeps today's meaning.
  auto unversioned = parse_profile("local: true\ncontext_window: 8000\n", "/p/x.yaml");
  ASSERT_TRUE(unversioned) << unversioned.status().message();
  EXPECT_TRUE(*unversioned->local);
  EXPECT_EQ(8000, *unversioned->context_window);
  EXPECT_TRUE(unversioned->warnings.empty());
}

TEST(ProfileKeys, VersionsCompareNumerically) {
  bool ok = false;
  EXPECT_LT(compare_versions("0.2.1", "0.2.5", &ok), 0);
  EXPECT_TRUE(ok);
  EXPECT_GT(compare_versions("0.10", "0.2.5", &ok), 0);
  EXPECT_EQ(0, compare_versions("0.2.5", "0.2.5.0", &ok));
  compare_versions("pre_0.2.0", "0.2.5", &ok);
  EXPECT_FALSE(ok);
  compare_versions("0.99999999999999999999999", "0.2.5", &ok);  // out of range: not a version, no exception
  EXPECT_FALSE(ok);
}

TEST(BuiltinProfiles, EveryOneOfOpenInterpretersNamesLoadsThroughTheParser) {
  std::set<std::string> names;
  for (auto n : builtin_profile_names()) names.insert(std::string(n));
  EXPECT_EQ((std::set<std::string>{"default", "fast", "vision", "os", "local", "local-vision", "local-os", "codestral",
                                   "codestral-vision", "codestral-os", "assistant", "llama3", "llama3-vision",
                                   "llama3-os", "groq", "claude-code", "swe-agent", "codex"}),
            names);
  test::TempDir home;
  EnvLookup env = [&](const std::string& k) -> std::optional<std::string> {
    if (k == "HOME") return home.path();
    return std::nullopt;
  };
  for (const auto& name : names) {
    auto p = load_named_profile(name, env);
    ASSERT_TRUE(p) << name << ": " << p.status().message();
    EXPECT_EQ("built-in profile `" + name + "`", p->path);
    EXPECT_EQ("0.2.5", p->version.value_or("")) << name;
    EXPECT_TRUE(p->notes.empty()) << name << ": " << p->notes.front();
    bool os = name == "os" || name.ends_with("-os");
    EXPECT_EQ(os, p->os) << name;
    EXPECT_TRUE(p->warnings.empty()) << name << ": " << p->warnings.front();
    auto c = merge_config(CliOptions{}, &*p);
    ASSERT_TRUE(c) << name << ": " << c.status().message();
    EXPECT_EQ(os, c->os) << name;
    EXPECT_EQ("1024x768", c->os_display) << name;
  }
  // What a few of them mean here.
  EXPECT_EQ("gpt-4o-mini", *load_named_profile("fast", env)->model);
  EXPECT_TRUE(*load_named_profile("vision", env)->supports_vision);
  EXPECT_TRUE(*load_named_profile("local", env)->local);
  EXPECT_EQ("ollama/codestral", *load_named_profile("codestral.py", env)->model);  // OI's file name works too
  EXPECT_EQ("groq/llama-3.1-70b-versatile", *load_named_profile("groq", env)->model);
  EXPECT_FALSE(load_named_profile("default", env)->model.has_value());  // no model chosen for the user
  for (const char* harness : {"claude-code", "swe-agent", "codex"}) {  // ours: the harness profiles
    EXPECT_EQ(harness, load_named_profile(harness, env)->harness.value_or(Harness{}).name);
  }
  auto missing = load_named_profile("no-such-profile", env);
  ASSERT_FALSE(missing);
  EXPECT_NE(std::string::npos, missing.status().message().find("built-in profiles: default, fast"));
}

TEST(BuiltinProfiles, AProfileOfTheUsersBeatsTheBuiltInOfTheSameName) {
  test::TempDir home;
  EnvLookup env = [&](const std::string& k) -> std::optional<std::string> {
    if (k == "XDG_CONFIG_HOME") return home.path() + "/config";
    return std::nullopt;
  };
  ASSERT_EQ(0, std::system(("mkdir -p " + home.path() + "/config/open-interpreter/profiles").c_str()));
  std::string file = home.path() + "/config/open-interpreter/profiles/fast.yaml";
  ASSERT_TRUE(write_file_atomic(file, "llm:\n  model: my-own-fast-model\nversion: 0.2.5\n").is_ok());
  auto p = load_named_profile("fast", env);
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ("my-own-fast-model", *p->model);
  EXPECT_EQ(file, p->path);
  p = load_named_profile("fast.yaml", env);
  ASSERT_TRUE(p);
  EXPECT_EQ("my-own-fast-model", *p->model);
  p = load_named_profile("vision", env);  // none of the user's: the built-in
  ASSERT_TRUE(p);
  EXPECT_EQ("gpt-4o", *p->model);
}

TEST(BuiltinProfiles, FastTrueInAProfileMeansTheFastProfilesModelAndInstructions) {
  auto p = parse_profile("fast: true\n", "p");
  ASSERT_TRUE(p);
  auto c = merge_config(CliOptions{}, &*p);
  ASSERT_TRUE(c);
  EXPECT_EQ("gpt-4o-mini", c->model.model);
  EXPECT_NE(std::string::npos, c->custom_instructions.find("FAST mode"));
  p = parse_profile("fast: true\nllm:\n  model: mine\n", "p");
  c = merge_config(CliOptions{}, &*p);
  EXPECT_EQ("mine", c->model.model);
}

}  // namespace
}  // namespace oishell::agent
