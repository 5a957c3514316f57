#pragma once
// Agent profiles: every key an Open Interpreter 0.4.3 profile may set (agent/config/profile_keys.h), in OI's nested style
// (`llm: {model: gpt-4o}`) or its dotted one (`llm.model: gpt-4o`, also `interpreter.llm.model`), plus ours:
// `sandbox:` (openshell|none), `policy:` (a policy file, relative to the profile, a built-in policy profile name, or
// the policy itself as a mapping: agent/config/profile_policy.h) and `max_turns:`. A key is applied where this agent has the
// feature, or accepted with a one-line note saying it has no effect here; any other key is an error
// (file:line:column, "did you mean ...?"), so a typo never goes unnoticed. `version:` is checked against OI's
// profile format version.
//
// Profiles are found by name in the profiles directory (agent/config/paths.h), then among the built-in ones
// (agent/config/profile_builtin.h): a file of the user's wins over the built-in of the same name. Python profiles (.py)
// are read in the sandbox (agent/config/profile_python.h) and their settings checked like a YAML profile's.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "agent/llm/provider.h"
#include "agent/config/harness.h"
#include "base/status.h"

namespace oishell::agent {

struct Profile {
  std::string path;  // the file, or "built-in profile `NAME`"
  // llm
  std::optional<std::string> model, api_key, api_base, provider, api_version;
  std::optional<int> context_window, max_tokens;
  std::optional<bool> supports_functions, supports_vision;
  std::optional<double> temperature, max_budget;
  // the session
  std::optional<bool> auto_run, offline, verbose, debug, loop, multi_line, local, fast, plain, highlight_active_line;
  std::optional<bool> always_apply_user_message_template;
  std::optional<std::string> custom_instructions, system_message, safe_mode, loop_message;
  std::optional<std::string> user_message_template, code_output_template, empty_code_output_template;
  std::optional<std::string> code_output_sender;
  std::optional<std::vector<std::string>> loop_breakers;
  std::optional<int> max_output;
  std::optional<std::string> version;
  std::optional<std::vector<std::string>> languages;  // computer.languages
  bool os = false;                                     // computer use (`os: true`; --os loads the `os` profile)
  std::optional<std::string> display_size;             // computer.display_size: the virtual display, "WxH"
  std::optional<Harness> harness;                      // `harness:` (agent/config/harness_yaml.h)
  // ours
  std::optional<std::string> sandbox;  // "openshell" | "none"
  std::optional<std::string> policy;   // resolved: an absolute file path or a profile name
  std::optional<std::string> policy_text;  // `policy:` as a mapping: the policy itself (agent/config/profile_policy.h)
  std::optional<int> max_turns;
  std::vector<std::string> warnings;   // shown as warnings (a version to migrate, `os`)
  std::vector<std::string> notes;      // one line per key accepted without effect here
};

Result<Profile> parse_profile(const std::string& yaml_text, const std::string& path);
// The settings a Python profile made, as `{"llm.model": "gpt-4o", "auto_run": true, ...}` (dotted names), checked
// like a YAML profile's keys. `path` names the .py file in messages.
Result<Profile> profile_from_settings(const nlohmann::json& settings, const std::string& path);
// A Python profile's runner output (agent/config/profile_python.h) made into a profile: its settings checked, its
// notes kept.
Result<Profile> profile_from_runner_output(const std::string& output, const std::string& path);
// A file: YAML (or JSON) by default; .py through the sandbox (agent/config/profile_python.h).
Result<Profile> load_profile_file(const std::string& path);

// Loads the profile `name`: a path (contains '/' or names an existing file), a file in the profiles directory
// (NAME, NAME.yaml, NAME.yml, NAME.json, NAME.py), else a built-in profile (NAME, NAME.yaml or NAME.py).
Result<Profile> load_named_profile(const std::string& name, const EnvLookup& env);
// The profile used without -p: default.yaml in the profiles directory, when it exists.
std::optional<std::string> default_profile_path(const EnvLookup& env);

}  // namespace oishell::agent
