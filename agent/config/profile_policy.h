#pragma once
// A profile's `policy:` written as a mapping: a sandbox policy of its own (docs/policy.md), kept in the profile
// instead of a file of its own, e.g. to give the sandbox credentials (`tls: terminate` rules with `credentials`,
// issue 16). The session writes it to a private file for `oishell supervise --policy` (agent/host/private_file.h).
//
// A profile never holds a secret: a credential names where its secret is read from outside the sandbox
// (`from_env: VARIABLE` of the user's environment, or `from_file: PATH`), and a credential with any other key (a
// `token:`, `value:`, `secret:` ...) or a `from_env` that is not a variable name refuses the whole profile, before
// anything is written anywhere. The rest of the policy is checked by oishell when the sandbox starts.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace oishell::agent {

struct ProfilePolicyError {
  YAML::Node node;      // where (its mark gives line and column)
  std::string message;  // "policy.network.allow[0].credentials[0]: `token`: ..."
};

// The policy text (YAML) for the mapping `policy`, from the profile `profile_path`: `version: 1` when it has no
// version; `extends: default` (the policy the agent uses without one) when it extends nothing; a relative `extends`
// path made absolute against the profile's directory, as `policy: FILE` is. Empty, with *errors filled, when a
// credential could carry a secret.
[[nodiscard]] std::string inline_policy_text(const YAML::Node& policy, const std::string& profile_path,
                                             std::vector<ProfilePolicyError>* errors);

}  // namespace oishell::agent
