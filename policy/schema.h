#pragma once
// The JSON Schema (draft-07) of the policy format, for editors (VS Code's YAML extension and others) to validate
// policies as they are typed. `oishell validate` stays the authority (paths, patterns and sizes are checked there).
#include <nlohmann/json.hpp>

namespace oishell::policy {

nlohmann::ordered_json policy_schema();

}  // namespace oishell::policy
