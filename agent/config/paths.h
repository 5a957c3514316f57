#pragma once
// Where Open Interpreter keeps its files, so the agent shares them with it:
//   profiles       $XDG_CONFIG_HOME/open-interpreter/profiles  (else ~/.config/open-interpreter/profiles)
//   models         $XDG_CONFIG_HOME/open-interpreter/models    (else ~/.config/open-interpreter/models)
//   conversations  $XDG_DATA_HOME/open-interpreter/conversations (else ~/.local/share/open-interpreter/conversations)
//   saved keys     $XDG_CONFIG_HOME/open-interpreter/keys  (ours; agent/llm/key_store.h)
#include <string>
#include <vector>

#include "agent/llm/provider.h"

namespace oishell::agent {

std::string home_dir(const EnvLookup& env);
std::string profiles_dir(const EnvLookup& env);
std::string models_dir(const EnvLookup& env);
std::string conversations_dir(const EnvLookup& env);
std::string keys_dir(const EnvLookup& env);
// Where Open Interpreter itself saves conversations: $XDG_CONFIG_HOME/open-interpreter/conversations (else
// ~/.config/...), its platformdirs user_config_dir. Listed by --conversations beside this agent's own.
std::string oi_conversations_dir(const EnvLookup& env);
// The chat prompt's history: $XDG_STATE_HOME/oishell/interpreter_history (else ~/.local/state/...).
std::string prompt_history_path(const EnvLookup& env);
// The agent's own files, which may hold API keys and past conversations: Open Interpreter's config folder (profiles,
// saved keys, OI's conversations), its data folder (this agent's conversations) and the prompt history's folder.
// Hidden from the sandbox whatever the policy says.
std::vector<std::string> agent_private_dirs(const EnvLookup& env);

}  // namespace oishell::agent
