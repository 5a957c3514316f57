#pragma once
// Agent profiles: Open Interpreter's YAML profile keys, plus `sandbox:` (openshell|none) and `policy:` (a policy
// file, relative to the profile, or a built-in policy profile name). Read from the profiles directory
// (agent/paths.h) by name, or from a path. Keys Open Interpreter has but this agent does not use are reported as
// warnings; any other key is an error (file:line:column), so a typo never goes unnoticed.
#include <optional>
#include <string>
#include <vector>

#include "agent/llm/provider.h"
#include "base/status.h"

namespace oishell::agent {

struct Profile {
  std::string path;
  // llm:
  std::optional<std::string> model, api_key, api_base, provider;
  std::optional<int> context_window, max_tokens;
  std::optional<bool> supports_functions;
  std::optional<double> temperature;
  // top level
  std::optional<bool> auto_run, offline, verbose;
  std::optional<std::string> custom_instructions, system_message;
  std::optional<int> max_output;
  std::optional<std::string> version;
  std::optional<std::vector<std::string>> languages;  // computer.languages
  std::optional<std::string> sandbox;                  // "openshell" | "none"
  std::optional<std::string> policy;                   // resolved: an absolute file path or a profile name
  std::optional<int> max_turns;
  std::vector<std::string> warnings;
};

Result<Profile> parse_profile(const std::string& yaml_text, const std::string& path);
Result<Profile> load_profile_file(const std::string& path);

// `name` is a path (contains '/' or names an existing file) or a name looked up in the profiles directory with
// .yaml/.yml added when missing. Python profiles (.py) are refused with a clear message.
Result<std::string> find_profile(const std::string& name, const EnvLookup& env);
// The profile used without -p: default.yaml in the profiles directory, when it exists.
std::optional<std::string> default_profile_path(const EnvLookup& env);

}  // namespace oishell::agent
