#pragma once
// The session's settings: command-line flags (CliOptions, every field optional) merged over a profile over the
// defaults. Flags beat the profile; the profile beats the defaults. auto_run defaults on with the openshell
// sandbox and off with --sandbox none.
#include <optional>
#include <string>
#include <vector>

#include "agent/llm/provider.h"
#include "agent/config/profile.h"
#include "agent/config/harness.h"
#include "agent/sandbox/policy_keep.h"
#include "base/status.h"

namespace oishell::agent {

// Every flag of Open Interpreter 0.4.3's argument table (tools/interpreter/oi_flags.h), plus ours.
struct CliOptions {
  std::optional<bool> auto_run;
  std::optional<std::string> model, api_base, api_key, api_version, provider;
  std::optional<int> context_window, max_tokens, max_output, max_turns;
  std::optional<double> temperature, max_budget;
  std::optional<bool> supports_functions, supports_vision;
  std::optional<std::string> profile;
  std::optional<std::string> custom_instructions, system_message;
  std::optional<std::string> safe_mode;  // off | ask | auto
  bool local = false;
  bool offline = false;
  bool plain = false;
  bool stdin_prompt = false;
  bool verbose = false;
  bool debug = false;
  bool conversations = false;
  bool version = false;
  bool json = false;
  bool loop = false;
  bool multi_line = false;
  bool no_highlight_active_line = false;
  bool disable_telemetry = false;
  bool speak_messages = false;
  bool contribute_conversation = false;
  bool server = false;
  bool acp = false;  // --acp: the Agent Client Protocol on stdio (editors)
  bool embed = false;  // --embed: JSON lines on stdio for an embedding program (the Python package)
  bool gui = false;  // --gui: the web UI beside the terminal
  std::optional<int> gui_port;
  // Actions that end the run: print the profiles folder (--profiles), the models folder (--local_models), reset a
  // built-in profile (--reset_profile [NAME]; empty: every built-in one).
  bool profiles = false;
  bool local_models = false;
  std::optional<std::string> reset_profile;
  std::optional<std::string> kubernetes;  // --kubernetes [CONTEXT/NAMESPACE/TEMPLATE]
  std::optional<std::string> sandbox;  // openshell | none
  std::optional<std::string> policy;
  std::vector<std::string> prompt;     // words of a prompt given as arguments
  // The prompt words start an interactive session (Open Interpreter's `i <words>`) instead of one run-and-exit.
  bool prompt_then_chat = false;
  bool invoked_as_i = false;           // argv[0] is `i`: the words are "I <words>" and OI's fast instructions apply
  std::vector<std::string> notes;      // one line per accepted flag that has no effect here
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
  std::string policy_text;     // the profile's `policy:` mapping, as YAML (used when `policy` is empty)
  std::string profile_path;    // the profile that was read, if any
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // settings accepted that have no effect here (one line each, shown at start)
  std::string prompt;          // the prompt given as arguments (joined)
  bool prompt_then_chat = false;  // the prompt starts the interactive chat (OI's `i <words>`)

  // Open Interpreter's settings beyond the model (flags and profile keys).
  std::optional<bool> supports_vision;  // unset: guessed from the model name
  std::optional<double> max_budget;     // USD over the session, from the usage the API reports
  std::string safe_mode = "off";        // off | ask (every block asks) | auto
  bool debug = false;
  bool loop = false;                    // keep going until the model says a loop breaker
  std::string loop_message;             // empty: the default loop message
  std::vector<std::string> loop_breakers;  // empty: the default breakers
  bool multi_line = false;              // ``` (and """) start and end multi-line input
  bool highlight_active_line = true;
  bool speak_messages = false;
  bool server = false;                  // --server: the loopback server instead of the terminal
  bool acp = false;                     // --acp: the Agent Client Protocol on stdio (agent/acp/acp_server.h)
  bool embed = false;                   // --embed: JSON lines on stdio (agent/embed/embed_server.h)
  bool gui = false;                     // --gui: the web UI on loopback beside the terminal (agent/gui/)
  int gui_port = 0;                     // 0: a free port
  std::optional<std::string> kubernetes;  // --kubernetes: the sandbox as a pod (deploy/kubernetes/README.md)
  bool os = false;                      // --os (profile `os: true`): computer use on a virtual display inside
  std::string os_display = "1024x768";  // its size (profile `computer.display_size`)
  std::optional<Harness> harness;       // the profile's `harness:` (claude-code, swe-agent, codex, or its own)
  std::string user_message_template;    // "{content}" is replaced by the user's message
  bool always_apply_user_message_template = false;
  std::string code_output_template;     // "{content}" is replaced by the output fed to the model
  std::string empty_code_output_template;
  std::string code_output_sender = "user";
  // Where an "allow always" answer is kept for later sessions (agent/sandbox/policy_keep.h); set when the session starts.
  KeepContext keep;
};

// Merges flags over the profile (may be null). Validates values (sandbox name, positive numbers).
Result<AgentConfig> merge_config(const CliOptions& cli, const Profile* profile);

// Loads the profile named by -p (or the default profile when it exists) and merges. The one call main() makes.
Result<AgentConfig> resolve_config(const CliOptions& cli, const EnvLookup& env);

}  // namespace oishell::agent
