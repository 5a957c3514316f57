// How SupervisorClient (executor_client.h) starts its supervisor: the `oishell` (or, for a pod, `oishell-kube`)
// binary found, the command line its options make (`oishell supervise` with the policy, the hidden paths, the
// workspace and the session's flags; `oishell-kube session` for --kubernetes), the environment it is given (without
// the model's API key), the child started in a process group of its own, and the words that describe the sandbox.
// Speaking the protocol with it is executor_client.cc's.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "agent/host/subprocess.h"
#include "agent/sandbox/executor_client.h"
#include "base/data_dir.h"

extern char** environ;

namespace oishell::agent {
namespace {

bool is_executable(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

bool looks_like_file(const std::string& policy) {
  struct stat st {};
  return policy.find('/') != std::string::npos || policy.ends_with(".yaml") || policy.ends_with(".yml") ||
         policy.ends_with(".json") || ::stat(policy.c_str(), &st) == 0;
}

// `variable`'s value; else `name` beside this executable (installed) or at `build_path` from it (the build tree);
// else `name`, found on PATH.
std::string find_program_near(const char* variable, const std::string& name, const std::string& build_path) {
  if (const char* env = std::getenv(variable); env && *env) return env;
  std::string dir = self_exe_dir();
  if (!dir.empty()) {
    for (const std::string& candidate : {dir + "/" + name, dir + "/" + build_path}) {
      if (is_executable(candidate)) return candidate;
    }
  }
  return name;
}

}  // namespace

std::string find_oishell() { return find_program_near("OISHELL_BIN", "oishell", "../oishell"); }

std::string find_oishell_kube() {
  return find_program_near("OISHELL_KUBE_BIN", "oishell-kube", "../oishell_kube/oishell-kube");
}

std::vector<std::string> SupervisorClient::command_line() const {
  if (options_.kubernetes) {
    // In the pod: its own workspace, the policy by name (a file of this machine is not there), the session's flags.
    // The agent's private directories are paths of this machine: nothing to hide there.
    std::vector<std::string> argv = {find_oishell_kube(), "session", "--kubernetes", *options_.kubernetes, "--",
                                     "--workspace", "/workspace"};
    if (!options_.policy.empty()) argv.insert(argv.end(), {"--profile", options_.policy});
    argv.insert(argv.end(), options_.extra_flags.begin(), options_.extra_flags.end());
    if (!options_.display.empty()) argv.insert(argv.end(), {"--display", options_.display});
    return argv;
  }
  std::vector<std::string> argv = {options_.oishell_path.empty() ? find_oishell() : options_.oishell_path,
                                   "supervise", "--sandbox", options_.sandbox};
  if (!options_.policy.empty()) {
    argv.push_back(looks_like_file(options_.policy) ? "--policy" : "--profile");
    argv.push_back(options_.policy);
  }
  if (options_.sandbox == "openshell") {
    for (const auto& path : options_.hidden_paths) {
      argv.push_back("--hide");
      argv.push_back(path);
    }
    if (!options_.workspace.empty()) argv.insert(argv.end(), {"--workspace", options_.workspace});
    argv.insert(argv.end(), options_.extra_flags.begin(), options_.extra_flags.end());
    if (!options_.display.empty()) argv.insert(argv.end(), {"--display", options_.display});
  }
  return argv;
}

std::string SupervisorClient::description() const {
  std::string policy = options_.policy.empty() ? "default" : options_.policy;
  if (options_.sandbox == "none") return "no sandbox: code runs on this host as you (--sandbox none)";
  const std::string where = options_.kubernetes ? " in a Kubernetes pod" : "";
  const std::string fresh = options_.workspace.empty() ? "" : ", fresh workspace " + options_.workspace;
  if (!options_.policy_label.empty()) return "openshell sandbox" + where + ", " + options_.policy_label + fresh;
  return "openshell sandbox" + where + ", policy " + policy + fresh;
}

Status SupervisorClient::spawn() {
  if (options_.kubernetes && !options_.policy.empty() && looks_like_file(options_.policy)) {
    return Status::error("--kubernetes: the policy must be a built-in profile's name (the file " + options_.policy +
                         " is on this machine, not in the pod)");
  }
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string_view name = kv.substr(0, kv.find('='));
    std::string_view value = kv.find('=') == std::string_view::npos ? "" : kv.substr(kv.find('=') + 1);
    bool secret = false;
    for (const auto& v : options_.secret_variables) secret = secret || name == v;
    for (const auto& v : options_.secret_values) {
      secret = secret || (v.size() >= 4 && value.find(v) != std::string_view::npos);
    }
    if (!secret) env.emplace_back(kv);
  }
  auto child = spawn_piped(command_line(), env, /*new_process_group=*/true);
  if (!child) return child.status().with_context("starting the sandbox supervisor");
  pid_ = child->pid;
  protected_seen_.clear();  // a new sandbox compares with a new start
  to_child_ = std::move(child->stdin_fd);
  from_child_ = std::move(child->stdout_fd);
  err_child_ = std::move(child->stderr_fd);
  return Status::ok();
}

}  // namespace oishell::agent
