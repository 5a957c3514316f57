#include "agent/config/config.h"

#include "agent/config/profile_builtin.h"

namespace oishell::agent {

template <typename T>
static T pick(const std::optional<T>& flag, const std::optional<T>& profile, T fallback) {
  if (flag) return *flag;
  if (profile) return *profile;
  return fallback;
}

template <typename T>
static std::optional<T> pick_opt(const std::optional<T>& flag, const std::optional<T>& profile) {
  return flag ? flag : profile;
}

Result<AgentConfig> merge_config(const CliOptions& cli, const Profile* profile) {
  static const Profile kEmpty;
  const Profile& p = profile ? *profile : kEmpty;
  AgentConfig c;
  c.profile_path = p.path;
  c.warnings = p.warnings;
  c.model.model = pick<std::string>(cli.model, p.model, "");
  c.model.provider = pick<std::string>(cli.provider, p.provider, "");
  c.model.api_base = pick<std::string>(cli.api_base, p.api_base, "");
  c.model.api_key = pick<std::string>(cli.api_key, p.api_key, "");
  c.model.api_key_origin = cli.api_key ? "--api_key" : "the profile's llm.api_key (" + p.path + ")";
  c.model.api_version = pick<std::string>(cli.api_version, p.api_version, "");
  c.context_window = pick_opt(cli.context_window, p.context_window);
  c.max_tokens = pick_opt(cli.max_tokens, p.max_tokens);
  c.temperature = pick_opt(cli.temperature, p.temperature);
  c.supports_functions = pick(cli.supports_functions, p.supports_functions, true);
  c.supports_vision = pick_opt(cli.supports_vision, p.supports_vision);
  c.max_budget = pick_opt(cli.max_budget, p.max_budget);
  c.local = cli.local || p.local.value_or(false);
  c.offline = cli.offline || p.offline.value_or(false);
  c.debug = cli.debug || p.debug.value_or(false);
  c.verbose = cli.verbose || p.verbose.value_or(false) || c.debug;
  c.plain = cli.plain || p.plain.value_or(false);
  c.json = cli.json;
  c.stdin_prompt = cli.stdin_prompt;
  c.conversations = cli.conversations;
  c.custom_instructions = pick<std::string>(cli.custom_instructions, p.custom_instructions, "");
  c.system_message = pick<std::string>(cli.system_message, p.system_message, "");
  c.max_output = pick(cli.max_output, p.max_output, 2800);
  c.max_turns = pick(cli.max_turns, p.max_turns, 0);
  if (p.languages) c.languages = *p.languages;
  c.sandbox = pick<std::string>(cli.sandbox, p.sandbox, "openshell");
  c.policy = pick<std::string>(cli.policy, p.policy, "");
  if (!cli.policy && p.policy_text) c.policy_text = *p.policy_text;  // --policy replaces the profile's
  c.auto_run = pick(cli.auto_run, p.auto_run, c.sandbox == "openshell");
  for (size_t i = 0; i < cli.prompt.size(); ++i) c.prompt += (i ? " " : "") + cli.prompt[i];
  c.prompt_then_chat = cli.prompt_then_chat;
  c.notes = cli.notes;
  c.notes.insert(c.notes.end(), p.notes.begin(), p.notes.end());
  c.loop = cli.loop || p.loop.value_or(false);
  if (p.loop_message) c.loop_message = *p.loop_message;
  if (p.loop_breakers) c.loop_breakers = *p.loop_breakers;
  c.multi_line = cli.multi_line || p.multi_line.value_or(false);
  c.highlight_active_line = !cli.no_highlight_active_line && p.highlight_active_line.value_or(true);
  c.speak_messages = cli.speak_messages;
  c.server = cli.server;
  c.acp = cli.acp;
  c.embed = cli.embed;
  c.gui = cli.gui;
  c.gui_port = cli.gui_port.value_or(0);
  if (p.user_message_template) c.user_message_template = *p.user_message_template;
  if (p.always_apply_user_message_template) c.always_apply_user_message_template = *p.always_apply_user_message_template;
  if (p.code_output_template) c.code_output_template = *p.code_output_template;
  if (p.empty_code_output_template) c.empty_code_output_template = *p.empty_code_output_template;
  if (p.code_output_sender) c.code_output_sender = *p.code_output_sender;
  c.safe_mode = pick<std::string>(cli.safe_mode, p.safe_mode, "off");
  // OI: safe_mode ask or auto turns auto_run off. Here the sandbox is the safety mechanism; ask still asks.
  if (c.safe_mode == "ask" || c.safe_mode == "auto") c.auto_run = false;
  // `fast: true` in a profile: the built-in fast profile's model and instructions, under this profile's own.
  if (p.fast.value_or(false)) {
    if (auto fast = parse_profile(std::string(*builtin_profile("fast")), "built-in profile `fast`")) {
      if (c.model.model.empty()) c.model.model = fast->model.value_or("");
      if (c.custom_instructions.empty()) c.custom_instructions = fast->custom_instructions.value_or("");
    }
  }

  if (c.sandbox != "openshell" && c.sandbox != "none") {
    return Status::error("--sandbox: `" + c.sandbox + "` is not a sandbox (expected openshell or none)");
  }
  if (c.max_output <= 0) return Status::error("--max_output must be positive");
  if (c.max_turns < 0) return Status::error("--max_turns must not be negative");
  if (c.context_window && *c.context_window <= 0) return Status::error("--context_window must be positive");
  if (c.max_tokens && *c.max_tokens <= 0) return Status::error("--max_tokens must be positive");
  if (c.max_budget && !(*c.max_budget > 0)) return Status::error("--max_budget must be a positive amount of USD");
  if (c.safe_mode != "off" && c.safe_mode != "ask" && c.safe_mode != "auto") {
    return Status::error("--safe_mode: `" + c.safe_mode + "` is not a mode (expected off, ask or auto)");
  }
  if (c.gui && (c.server || c.acp)) {
    return Status::error(std::string("--gui shows a terminal session; it does not go with ") +
                         (c.server ? "--server" : "--acp"));
  }
  if (c.embed && (c.server || c.acp || c.gui)) {
    return Status::error("--embed speaks to the program that started it on stdio; it does not go with --server, "
                         "--acp or --gui");
  }
  if (cli.gui_port && !c.gui) return Status::error("--gui_port needs --gui");
  c.kubernetes = cli.kubernetes;
  if (c.kubernetes && c.sandbox != "openshell") {
    return Status::error("--kubernetes runs the openshell sandbox in a pod; it does not go with --sandbox " + c.sandbox);
  }
  c.os = p.os;
  c.harness = p.harness;
  if (c.harness && !c.supports_functions) {
    return Status::error("harness " + c.harness->name + ": its tools need a model that calls tools "
                         "(llm.supports_functions is off)");
  }
  if (p.display_size) c.os_display = *p.display_size;
  if (c.os && c.sandbox != "openshell") {
    return Status::error("--os: computer use runs on a virtual display inside the sandbox; with --sandbox " +
                         c.sandbox + " it would drive this machine's own desktop, which this agent never does");
  }
  return c;
}

Result<AgentConfig> resolve_config(const CliOptions& cli, const EnvLookup& env) {
  std::optional<Profile> profile;
  if (cli.embed && !cli.profile) {
    // Open Interpreter's Python API reads no profile: the embedding program sets what it wants.
  } else if (cli.profile) {
    auto loaded = load_named_profile(*cli.profile, env);
    if (!loaded) return loaded.status().with_context("profile");
    profile = std::move(*loaded);
  } else if (auto path = default_profile_path(env)) {
    auto loaded = load_profile_file(*path);
    if (!loaded) return loaded.status().with_context("profile");
    profile = std::move(*loaded);
  }
  return merge_config(cli, profile ? &*profile : nullptr);
}

}  // namespace oishell::agent
