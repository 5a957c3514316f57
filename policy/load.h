#pragma once
// Loading a policy with its `extends` chain: a built-in profile name (profiles/NAME.yaml in the data dir) or a path
// relative to the extending file. Merge rules: scalars override, lists append (duplicates dropped), maps merge by key;
// `hide` and `network.deny` always win over what would expose or allow the same thing (applied at compile time).
// Cycles and chains deeper than kMaxExtendsDepth are errors.
#include <string>
#include <string_view>
#include <vector>

#include "policy/compile.h"
#include "policy/policy.h"

namespace oishell::policy {

inline constexpr int kMaxExtendsDepth = 8;

struct LoadResult {
  Policy policy;
  std::vector<Diagnostic> errors;
  bool ok() const { return errors.empty(); }
};

LoadResult load_policy(const PolicySource& source);  // both empty = the `default` profile
LoadResult load_policy_file(const std::string& path);
LoadResult load_profile(const std::string& name);
// `file` names the text in messages; a relative `extends` path resolves against `base_dir`.
LoadResult load_policy_text(std::string_view text, const std::string& file, const std::string& base_dir);

// `child` on top of `base`.
Policy merge_policies(const Policy& base, const Policy& child);

// The built-in profiles, sorted by name.
std::vector<std::string> builtin_profile_names();
// Where profile `name` is read from; empty when `name` is not a valid profile name.
std::string builtin_profile_path(const std::string& name);

}  // namespace oishell::policy
