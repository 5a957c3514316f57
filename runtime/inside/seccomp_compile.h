#pragma once
// The seccomp compiler on its own (library oishell_seccomp_compiler): runtime/inside/seccomp.h uses it for specs the
// build did not precompile, and tools/seccomp_precompile.cc runs it at build time for those it did.
#include "base/status.h"
#include "policy/sandbox_spec.h"
#include "runtime/inside/seccomp.h"

namespace oishell {

// The deny sets of `spec` compiled by libseccomp. `notify`: reported denials go to a user-notification listener
// (needs libseccomp API level 5); otherwise they return their errno directly.
Result<SeccompProgram> seccomp_compile_with_libseccomp(const SeccompSpec& spec, bool notify);

// What the notifier answers for each reported syscall of `spec` (no libseccomp compile: the plan only).
Result<SeccompReports> seccomp_plan_reports(const SeccompSpec& spec);

}  // namespace oishell
