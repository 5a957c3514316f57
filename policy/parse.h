#pragma once
// One policy file (already loaded by policy/yaml_safe.h) to the typed model, with every error found. `extends` is
// recorded, not resolved (policy/load.h does that).
#include <string>
#include <vector>

#include "policy/policy.h"
#include "policy/yaml_node.h"

namespace oishell::policy {

// The keys of each section, for the schema, the docs test and "did you mean".
const std::vector<std::string>& top_level_keys();

// Appends every problem to `errors`; the returned policy holds what parsed.
Policy parse_policy(const YamlNode& root, const std::string& file, std::vector<Diagnostic>& errors,
                    SourcePos* extends_pos = nullptr);

}  // namespace oishell::policy
