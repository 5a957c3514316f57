#pragma once
// The session's settings: command-line flags (CliOptions, every field optional) merged over a profile over the
// defaults. Flags beat the profile; the profile beats the defaults. auto_run defaults on with the openshell
// sandbox and off with --sandbox none.
#include <optional>
#include <string>
#include <vector>

#include "agent/llm/provider.h"
#include "agent/profile.h"
#include "base/status.h"

namespace oishell::agent {

struct CliOptions {
  std::optional<bool> auto_run;
  std::optional<std::string> model, api_base, api_key, provider;
  std::optional<int> context_window, max_tokens, max_output, max_turns;
  std::optional<double> temperature;
  std::optional<bool> supports_functions;
  std::optional<std::string> profile;
  std::optional<std::string> custom_instructions, system_message;
  bool local = false;
  bool offline = false;
  bool plain = false;
  bool stdin_prompt = false;
  bool verbose = false;
  bool conversations = false;
  bool version = false;
  bool json = false;
  std::optional<std::string> sandbox;  // openshell | none
  std::optional<std::string> policy;
  std::vector<std::string> prompt;     // words of a prompt given as arguments
};

struct AgentConfig {
  ModelChoice model;
  std::optional<int> context_window, max_tokens;
  std::optional<double> temperature;
  bool supports_functions = true;
  bool local = false;
  bool auto_run = true;
  bool offline = false;
  bool verbose = false;
  bool plain = false;
  bool json = false;
  bool stdin_prompt = false;
  bool conversations = false;
  std::string custom_instructions;
  std::string system_message;  // replaces the default instructions when set
  int max_output = 2800;
  int max_turns = 0;           // 0: no bound
  std::vector<std::string> languages;  // empty: what the sandbox offers
  std::string sandbox = "openshell";
  std::string policy;          // policy file or built-in policy profile; empty: the default profile
  std::string profile_path;    // the profile that was read, if any
  std::vector<std::string> warnings;
  std::string prompt;          // the prompt given as arguments (joined)
};

// Merges flags over the profile (may be null). Validates values (sandbox name, positive numbers).
Result<AgentConfig> merge_config(const CliOptions& cli, const Profile* profile);

// Loads the profile named by -p (or the default profile when it exists) and merges. The one call main() makes.
Result<AgentConfig> resolve_config(const CliOptions& cli, const EnvLookup& env);

}  // namespace oishell::agent
