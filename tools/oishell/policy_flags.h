#pragma once
// The policy flags shared by `oishell run` and `oishell supervise`: where the policy comes from and the
// overrides that add to it (--policy, --profile, --workspace, --ro, --rw, --allow-domain, --net, --env,
// --timeout, --memory).
#include <string>

#include "policy/compile.h"

namespace oishell::cli {

// Applies `flag` with `value` when it is one of the policy flags; returns false when `flag` is not one of them.
bool apply_policy_flag(const std::string& flag, const std::string& value, PolicySource* source,
                       PolicyOverrides* overrides);

}  // namespace oishell::cli
