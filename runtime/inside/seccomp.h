#pragma once
// seccomp: architecture check, deny sets by purpose, denials reported through user notification.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"
#include "policy/seccomp_sets.h"
#include "runtime/outside/events.h"

namespace oishell {

// A compiled filter: classic BPF for the native ABI (foreign ABIs, x32 and i386, are killed). Reportable denials
// go to a user-notification listener (`notify`); the supervisor serves it with SeccompNotifier
// (runtime/outside/seccomp_notifier.h), which answers each
// with the set's errno and emits a "denied" event. Calls whose denial needs no report (clone3 -> ENOSYS, so libc
// falls back to clone) return their errno directly.
// What the notifier answers for each reported syscall: its errno and the name of its deny set (by number).
struct SeccompReports {
  std::vector<int> errno_by_syscall;
  std::vector<std::string> set_by_syscall;
  std::vector<bool> brokered_by_syscall;  // seccomp_sets::broker_rules(): handed to the broker, not denied
  std::vector<bool> observed_by_syscall;  // seccomp_sets::observed_path_rules(): recorded, then let through
  // The reported deny rules by syscall: an observed call that one of them matches is a denial, not an observation.
  std::vector<std::vector<const seccomp_sets::Rule*>> denies_by_syscall;
};

struct SeccompProgram {
  std::vector<sock_filter> instructions;
  bool notify = false;
  SeccompReports reports;  // filled by seccomp_compile (not carried by to_bytes/from_bytes)
};

// Compiles the deny sets of `spec` with libseccomp. The supervisor does this while init builds its mount tree and
// passes the result in the `joined` message (to_bytes/from_bytes), so that init only loads it.
Result<SeccompProgram> seccomp_compile(const SeccompSpec& spec);
std::string seccomp_program_to_bytes(const SeccompProgram& program);
Result<SeccompProgram> seccomp_program_from_bytes(const std::string& bytes, bool notify);
// Loads `program` into the calling process (needs no_new_privs). Returns the listener fd when program.notify,
// else an invalid fd.
Result<UniqueFd> seccomp_load_program(const SeccompProgram& program);
// seccomp_compile() then seccomp_load_program().
Result<UniqueFd> seccomp_apply(const SeccompSpec& spec);

}  // namespace oishell
