#pragma once
// The policy flags shared by `oishell run` and `oishell supervise`: where the policy comes from and the
// overrides that add to it (--policy, --profile, --workspace, --ro, --rw, --allow-domain, --net, --env,
// --timeout, --memory).
#include <string>

#include "policy/compile.h"

namespace oishell::cli {

// Reads the option at argv[*i] as `--flag=value` or `--flag value` (advancing *i past a separate value) into
// `flag` and `value`. Returns false when the value is missing.
bool read_option(int argc, char** argv, int* i, std::string* flag, std::string* value);

// Applies a policy flag that takes no value (--allow-home-workspace); false when `flag` is not one of them.
bool apply_policy_switch(const std::string& flag, PolicyOverrides* overrides);

// Applies `flag` with `value` when it is one of the policy flags; returns false when `flag` is not one of them.
bool apply_policy_flag(const std::string& flag, const std::string& value, PolicySource* source,
                       PolicyOverrides* overrides);

}  // namespace oishell::cli
