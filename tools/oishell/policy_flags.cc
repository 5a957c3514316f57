#include "tools/oishell/policy_flags.h"

namespace oishell::cli {

using completion::Option;
using completion::Value;

const std::vector<Option>& policy_flag_options() {
  static const std::vector<Option> options = {
      {{"--policy"}, Value::file, "FILE", "the policy file (instead of the default profile)", {}},
      {{"--profile"}, Value::profile, "NAME", "a built-in profile (instead of the default one)", {}},
      {{"--workspace"}, Value::directory, "DIR", "the workspace (default: the current directory)", {}},
      {{"--ro"}, Value::file, "PATH", "a host path visible read-only", {}, true},
      {{"--rw"}, Value::file, "PATH", "a host path visible read-write", {}, true},
      {{"--hide"}, Value::file, "PATH", "a host path never visible inside (wins over every other rule)", {}, true},
      {{"--unix"}, Value::file, "PATH", "a host unix socket the sandbox may connect to (network.unix)", {}, true},
      {{"--allow-domain"}, Value::text, "D", "a destination the proxy allows (host, *.suffix, host:port)", {}, true},
      {{"--allow-udp"}, Value::text, "HOST:PORT", "a UDP destination connected sockets may reach (a udp rule)", {},
       true},
      {{"--net"}, Value::choice, "MODE", "the network: none, or proxy (only through oishell's proxy)",
       {"none", "proxy"}},
      {{"--env"}, Value::text, "K=V", "a variable set inside", {}, true},
      {{"--timeout"}, Value::text, "DUR", "wall-clock limit (30s, 10m, 1h30m)", {}},
      {{"--memory"}, Value::text, "SIZE", "memory limit (512MiB, 2GiB)", {}},
      {{"--allow-home-workspace"}, Value::none, "", "allow the home directory as the workspace (dotfiles stay read-only)",
       {}},
  };
  return options;
}

std::string read_option(int argc, char** argv, int* i, const std::vector<Option>& options, const Option** option,
                        std::string* value) {
  std::string flag = argv[*i];
  bool inline_value = false;
  if (auto eq = flag.find('='); eq != std::string::npos && flag.rfind("--", 0) == 0) {
    *value = flag.substr(eq + 1);
    flag.resize(eq);
    inline_value = true;
  }
  *option = completion::find_option(options, flag);
  if (!*option) return "unknown option " + flag;
  if (!(*option)->takes_value()) {
    if (inline_value) return "option " + flag + " takes no value";
    value->clear();
    return "";
  }
  if (inline_value) return "";
  if (*i + 1 >= argc) return "option " + flag + " needs a value";
  *value = argv[++*i];
  return "";
}

bool apply_policy_flag(const std::string& flag, const std::string& value, PolicySource* source,
                       PolicyOverrides* overrides) {
  if (flag == "--policy") {
    source->file = value;
  } else if (flag == "--profile") {
    source->profile = value;
  } else if (flag == "--workspace") {
    overrides->workspace = value;
  } else if (flag == "--ro") {
    overrides->read_only.push_back(value);
  } else if (flag == "--rw") {
    overrides->read_write.push_back(value);
  } else if (flag == "--hide") {
    overrides->hide.push_back(value);
  } else if (flag == "--unix") {
    overrides->unix_sockets.push_back(value);
  } else if (flag == "--allow-domain") {
    overrides->allow_domains.push_back(value);
  } else if (flag == "--allow-udp") {
    overrides->allow_udp.push_back(value);
  } else if (flag == "--net") {
    overrides->net_mode = value;
  } else if (flag == "--env") {
    overrides->env_set.push_back(value);
  } else if (flag == "--timeout") {
    overrides->wall_time = value;
  } else if (flag == "--memory") {
    overrides->memory = value;
  } else if (flag == "--allow-home-workspace") {
    overrides->allow_home_workspace = true;
  } else {
    return false;
  }
  return true;
}

std::string parse_command_args(int argc, char** argv, const std::vector<completion::Option>& options,
                               PolicySource* source, PolicyOverrides* overrides, const OtherFlag& other,
                               std::vector<std::string>* command, bool* help) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      command->assign(argv + i + 1, argv + argc);
      break;
    }
    if (arg == "-h" || arg == "--help") {
      *help = true;
      return "";
    }
    if (arg.empty() || arg[0] != '-') {  // the command starts here (no `--` needed when unambiguous)
      command->assign(argv + i, argv + argc);
      break;
    }
    const completion::Option* option = nullptr;
    std::string value;
    if (std::string error = read_option(argc, argv, &i, options, &option, &value); !error.empty()) return error;
    const std::string& flag = option->names.front();
    if (apply_policy_flag(flag, value, source, overrides)) continue;
    if (std::string error = other(flag, value); !error.empty()) return error;
  }
  if (!source->file.empty() && !source->profile.empty()) return "--policy and --profile exclude each other";
  return "";
}

}  // namespace oishell::cli
