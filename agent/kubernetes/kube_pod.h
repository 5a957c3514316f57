#pragma once
// The session pod's manifest: the template (a pod manifest in YAML or JSON; by default the session pod of
// deploy/kubernetes/pod.yaml, installed with the package) given a fresh name, the session's `oishell supervise`
// arguments, stdin attached, and a deadline after which Kubernetes ends it whatever happens to the agent.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace oishell::agent {

inline constexpr long kSessionDeadlineSeconds = 24 * 3600;  // activeDeadlineSeconds unless the template sets one

// `supervise_args`: what follows `oishell supervise` (the template's own arguments are replaced). `name`: the pod's.
Result<nlohmann::json> session_pod(const std::string& template_text, const std::string& name,
                                   const std::vector<std::string>& supervise_args);

// The name of the container session_pod() made run `oishell supervise`.
std::string supervisor_container(const nlohmann::json& pod);

// "oishell-session-" and 10 random lowercase hex digits.
std::string session_pod_name();

}  // namespace oishell::agent
