#include "agent/config/paths.h"

#include <pwd.h>
#include <unistd.h>

namespace oishell::agent {

std::string home_dir(const EnvLookup& env) {
  if (auto h = env("HOME")) return *h;
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return "/";
}

// Open Interpreter's own folder (platformdirs' user_config_dir("open-interpreter")).
static std::string oi_config_dir(const EnvLookup& env) {
  if (auto x = env("XDG_CONFIG_HOME"); x && !x->empty() && x->front() == '/') return *x + "/open-interpreter";
  return home_dir(env) + "/.config/open-interpreter";
}

std::string profiles_dir(const EnvLookup& env) { return oi_config_dir(env) + "/profiles"; }

std::string models_dir(const EnvLookup& env) { return oi_config_dir(env) + "/models"; }

std::string conversations_dir(const EnvLookup& env) {
  if (auto x = env("XDG_DATA_HOME"); x && x->front() == '/') return *x + "/open-interpreter/conversations";
  return home_dir(env) + "/.local/share/open-interpreter/conversations";
}

std::string keys_dir(const EnvLookup& env) {
  if (auto x = env("XDG_CONFIG_HOME"); x && x->front() == '/') return *x + "/open-interpreter/keys";
  return home_dir(env) + "/.config/open-interpreter/keys";
}

std::string oi_conversations_dir(const EnvLookup& env) {
  if (auto x = env("XDG_CONFIG_HOME"); x && x->front() == '/') return *x + "/open-interpreter/conversations";
  return home_dir(env) + "/.config/open-interpreter/conversations";
}

std::vector<std::string> agent_private_dirs(const EnvLookup& env) {
  auto parent = [](const std::string& p) { return p.substr(0, p.rfind('/')); };
  return {parent(profiles_dir(env)), parent(conversations_dir(env)), parent(prompt_history_path(env))};
}

std::string prompt_history_path(const EnvLookup& env) {
  if (auto x = env("XDG_STATE_HOME"); x && x->front() == '/') return *x + "/oishell/interpreter_history";
  return home_dir(env) + "/.local/state/oishell/interpreter_history";
}

}  // namespace oishell::agent
