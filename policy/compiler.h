#pragma once
// The steps of compile_policy() (policy/compile.h), exposed for `explain`, `diff` and tests.
#include <vector>

#include "base/status.h"
#include "policy/compile.h"
#include "policy/policy.h"

namespace oishell::policy {

// Adds the command-line overrides to `policy` (relative --ro/--rw paths resolve against context.cwd). Problems are
// appended to `errors` with the file name "command line".
void apply_overrides(Policy& policy, const PolicyOverrides& overrides, const CompileContext& context,
                     std::vector<Diagnostic>& errors);

// A merged, validated policy against the host described by `context`. Host-dependent problems (a workspace or an
// extra path that does not exist, a workspace inside a hidden path) are errors naming the policy line.
Result<SandboxSpec> compile(const Policy& policy, const CompileContext& context);

// The built-in defaults for what no file sets.
inline constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";
inline constexpr const char* kFallbackHome = "/home/oishell";
// The host directories bound read-only (when present) in every sandbox.
const std::vector<std::string>& system_dirs();
// Every seccomp deny set of the default level, in order; strict adds "strict_extras".
const std::vector<std::string>& default_deny_sets();
// The seccomp part of a compiled policy before its allow_syscalls: the deny sets of `level`, without `namespaces`
// when nested namespaces are allowed. The build precompiles these (runtime/inside/seccomp_prebuilt.h).
SeccompSpec seccomp_spec(SeccompLevel level, bool nested_namespaces);

}  // namespace oishell::policy
