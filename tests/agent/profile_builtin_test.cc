// The built-in profiles of a model served on this machine (local, codestral and llama3, each plain, -vision and -os):
// the settings each one resolves to, every field of the parsed profile, as they were when each was written out by
// hand. They are now made from one table (agent/config/profile_builtin.cc); these are what it must keep giving.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/config/profile.h"
#include "agent/config/profile_builtin.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

// Every setting a profile made, by its key; what it left unset is absent.
json settings_of(const Profile& p) {
  json s = json::object();
  auto put = [&s](const char* key, const auto& value) {
    if (value) s[key] = *value;
  };
  put("llm.model", p.model);
  put("llm.api_key", p.api_key);
  put("llm.api_base", p.api_base);
  put("llm.provider", p.provider);
  put("llm.api_version", p.api_version);
  put("llm.context_window", p.context_window);
  put("llm.max_tokens", p.max_tokens);
  put("llm.supports_functions", p.supports_functions);
  put("llm.supports_vision", p.supports_vision);
  put("llm.temperature", p.temperature);
  put("llm.max_budget", p.max_budget);
  put("auto_run", p.auto_run);
  put("offline", p.offline);
  put("verbose", p.verbose);
  put("debug", p.debug);
  put("loop", p.loop);
  put("multi_line", p.multi_line);
  put("local", p.local);
  put("fast", p.fast);
  put("plain", p.plain);
  put("highlight_active_line", p.highlight_active_line);
  put("always_apply_user_message_template", p.always_apply_user_message_template);
  put("custom_instructions", p.custom_instructions);
  put("system_message", p.system_message);
  put("safe_mode", p.safe_mode);
  put("loop_message", p.loop_message);
  put("user_message_template", p.user_message_template);
  put("code_output_template", p.code_output_template);
  put("empty_code_output_template", p.empty_code_output_template);
  put("code_output_sender", p.code_output_sender);
  put("loop_breakers", p.loop_breakers);
  put("max_output", p.max_output);
  put("version", p.version);
  put("computer.languages", p.languages);
  put("computer.display_size", p.display_size);
  put("sandbox", p.sandbox);
  put("policy", p.policy);
  put("policy_text", p.policy_text);
  put("max_turns", p.max_turns);
  if (p.os) s["os"] = true;
  if (p.harness) s["harness"] = p.harness->name;
  if (!p.warnings.empty()) s["warnings"] = p.warnings;
  if (!p.notes.empty()) s["notes"] = p.notes;
  return s;
}

const char* const kOutputTemplate =
    "The code ran. Its output:\n\"\"\"\n{content}\n\"\"\"\nWhat does it mean, and what should run next (if anything)?";
const char* const kEmptyOutputTemplate = "The code ran and printed nothing. What should run next (if anything)?";

TEST(BuiltinProfileSettings, ServedModelsResolveToTheSettingsTheyHad) {
  const json templates = {{"code_output_template", kOutputTemplate},
                          {"empty_code_output_template", kEmptyOutputTemplate}};
  auto with = [](json a, const json& b) {
    a.update(b);
    return a;
  };
  const json local = {{"local", true}, {"offline", true}, {"llm.supports_functions", false}, {"version", "0.2.5"}};
  const json codestral = {{"llm.model", "ollama/codestral"}, {"llm.supports_functions", false},
                          {"llm.context_window", 7000}, {"llm.max_tokens", 1000}, {"max_output", 600},
                          {"offline", true}, {"version", "0.2.5"}};
  const json llama3 = {{"llm.model", "ollama/llama3"}, {"llm.supports_functions", false},
                       {"llm.context_window", 7000}, {"llm.max_tokens", 1000}, {"offline", true},
                       {"version", "0.2.5"}};
  const json vision = {{"llm.supports_vision", true}};
  const json os = {{"os", true}};
  const std::pair<const char*, json> want[] = {
      {"local", with(local, templates)},
      {"local-vision", with(with(local, vision), templates)},
      {"local-os", with(with(local, vision), os)},
      {"codestral", with(codestral, templates)},
      {"codestral-vision", with(codestral, vision)},
      {"codestral-os", with(codestral, os)},
      {"llama3", with(llama3, templates)},
      {"llama3-vision", with(llama3, vision)},
      {"llama3-os", with(llama3, os)},
  };
  for (const auto& [name, settings] : want) {
    auto text = builtin_profile(name);
    ASSERT_TRUE(text) << name;
    auto p = parse_profile(std::string(*text), std::string("built-in profile `") + name + "`");
    ASSERT_TRUE(p) << name << ": " << p.status().message();
    EXPECT_EQ(settings, settings_of(*p)) << name;
  }
}

}  // namespace
}  // namespace oishell::agent
