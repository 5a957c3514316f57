#include "tools/oishell/policy_flags.h"

namespace oishell::cli {

bool read_option(int argc, char** argv, int* i, std::string* flag, std::string* value) {
  *flag = argv[*i];
  if (auto eq = flag->find('='); eq != std::string::npos && flag->rfind("--", 0) == 0) {
    *value = flag->substr(eq + 1);
    flag->resize(eq);
    return true;
  }
  if (*i + 1 >= argc) return false;
  *value = argv[++*i];
  return true;
}

bool apply_policy_switch(const std::string& flag, PolicyOverrides* overrides) {
  if (flag != "--allow-home-workspace") return false;
  overrides->allow_home_workspace = true;
  return true;
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
  } else if (flag == "--allow-domain") {
    overrides->allow_domains.push_back(value);
  } else if (flag == "--net") {
    overrides->net_mode = value;
  } else if (flag == "--env") {
    overrides->env_set.push_back(value);
  } else if (flag == "--timeout") {
    overrides->wall_time = value;
  } else if (flag == "--memory") {
    overrides->memory = value;
  } else {
    return false;
  }
  return true;
}

}  // namespace oishell::cli
