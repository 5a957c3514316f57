// The seccomp compiler: the deny sets of policy/seccomp_sets planned for a SeccompSpec and compiled by libseccomp
// (default allow, native x86_64 only, foreign ABIs killed). A library of its own, so that the build can run it
// (tools/seccomp_precompile.cc).
#include "runtime/inside/seccomp_compile.h"

#include <seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>

#include "base/unique_fd.h"
#include "policy/seccomp_sets.h"

namespace oishell {
namespace {

struct PlannedRule {
  int nr;
  std::string_view set;
  const seccomp_sets::Rule* rule;
  bool brokered = false;
  bool observed = false;
};

// The active rules for `spec`: the rules of its sets in effect (policy/seccomp_sets: sets_in_effect, which the
// guarantee table reads too), then the broker's and the observer's. Unknown names are errors.
Result<std::vector<PlannedRule>> plan(const SeccompSpec& spec) {
  for (const auto& allowed : spec.allow_syscalls) {
    if (seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, allowed.c_str()) < 0) {
      return Status::error("seccomp: allow_syscalls names an unknown x86_64 syscall `" + allowed + "`");
    }
  }
  auto sets = seccomp_sets::sets_in_effect(spec);
  if (!sets) return sets.status();
  std::vector<PlannedRule> rules;
  for (const auto& effect : *sets) {
    for (const seccomp_sets::Rule* rule : effect.rules) {
      int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, rule->syscall);
      if (nr < 0) return Status::error(std::string("seccomp: syscall `") + rule->syscall + "` unknown to libseccomp");
      rules.push_back({nr, effect.set->name, rule});
    }
  }
  for (const auto& rule : seccomp_sets::broker_rules()) {
    int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, rule.syscall);
    if (nr < 0) return Status::error(std::string("seccomp: syscall `") + rule.syscall + "` unknown to libseccomp");
    rules.push_back({nr, "broker", &rule, true});
  }
  if (spec.observe_paths) {
    // A call some rule answers without the listener (an unreported denial: openat2 -> ENOSYS) or the broker takes
    // stays theirs. A reported denial with conditions (open with O_CREAT and a set-id mode) shares the listener:
    // the notifier tells the two apart by the same conditions on the same register values (denies_by_syscall).
    std::vector<int> taken;
    for (const auto& r : rules) {
      if (r.brokered || !r.rule->report) taken.push_back(r.nr);
    }
    for (const auto& rule : seccomp_sets::observed_path_rules()) {
      int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, rule.syscall);
      if (nr < 0) return Status::error(std::string("seccomp: syscall `") + rule.syscall + "` unknown to libseccomp");
      if (std::find(taken.begin(), taken.end(), nr) != taken.end()) continue;
      rules.push_back({nr, "observe", &rule, false, true});
    }
  }
  return rules;
}

scmp_arg_cmp to_scmp(const seccomp_sets::ArgCheck& c) {
  switch (c.op) {
    case seccomp_sets::ArgCheck::Op::masked_eq: return scmp_arg_cmp{c.arg, SCMP_CMP_MASKED_EQ, c.mask, c.value};
    case seccomp_sets::ArgCheck::Op::ne: return scmp_arg_cmp{c.arg, SCMP_CMP_NE, c.value, 0};
    case seccomp_sets::ArgCheck::Op::ge: return scmp_arg_cmp{c.arg, SCMP_CMP_GE, c.value, 0};
  }
  return scmp_arg_cmp{c.arg, SCMP_CMP_NE, c.value, 0};
}

struct CtxRelease {
  void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxRelease>;

SeccompReports reports_of(const std::vector<PlannedRule>& rules) {
  SeccompReports reports;
  for (const auto& planned : rules) {
    if (!planned.rule->report) continue;
    size_t nr = static_cast<size_t>(planned.nr);
    if (reports.errno_by_syscall.size() <= nr) {
      reports.errno_by_syscall.resize(nr + 1, 0);
      reports.set_by_syscall.resize(nr + 1);
      reports.brokered_by_syscall.resize(nr + 1, false);
      reports.observed_by_syscall.resize(nr + 1, false);
      reports.denies_by_syscall.resize(nr + 1);
    }
    if (planned.observed) {
      reports.observed_by_syscall[nr] = true;
      continue;
    }
    if (!planned.brokered) reports.denies_by_syscall[nr].push_back(planned.rule);
    if (planned.brokered) {
      reports.brokered_by_syscall[nr] = true;
      continue;
    }
    if (reports.errno_by_syscall[nr] != 0) continue;  // first set wins (the table has no conflicting errnos)
    reports.errno_by_syscall[nr] = planned.rule->err;
    reports.set_by_syscall[nr] = std::string(planned.set);
  }
  return reports;
}

}  // namespace

Result<SeccompReports> seccomp_plan_reports(const SeccompSpec& spec) {
  auto rules = plan(spec);
  if (!rules) return rules.status();
  return reports_of(*rules);
}

Result<SeccompProgram> seccomp_compile_with_libseccomp(const SeccompSpec& spec, bool notify) {
  if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
    return Status::error("seccomp: only native x86_64 is supported (the deny sets are written for it)");
  }
  auto rules = plan(spec);
  if (!rules) return rules.status();

  // connect(2) is brokered by the supervisor through the listener: without user notification the sandbox
  // would have no decided way out, and unix sockets would be the filesystem's business again.
  if (!notify) {
    return Status::error("seccomp: user notification (libseccomp API level 5, Linux 5.0) is needed to broker connect(2)");
  }
  SeccompProgram program;
  program.reports = reports_of(*rules);
  program.notify = notify;
  Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Status::error("seccomp_init failed");
  // seccomp_init() holds only the native ABI; x32 (same audit arch, syscall numbers >= 0x40000000) and i386 both
  // hit the bad-architecture action.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0) {
    return Status::from_errno(-rc, "seccomp_attr_set(ACT_BADARCH, KILL_PROCESS)");
  }
  // A binary tree over syscall numbers instead of a linear scan: every allowed call pays O(log n) comparisons.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0) {
    return Status::from_errno(-rc, "seccomp_attr_set(CTL_OPTIMIZE, 2)");
  }
  for (const auto& planned : *rules) {
    const auto& rule = *planned.rule;
    uint32_t action =
        rule.report && program.notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(static_cast<uint32_t>(rule.err));
    std::vector<scmp_arg_cmp> cmps;
    for (const auto& c : rule.when) cmps.push_back(to_scmp(c));
    int rc = seccomp_rule_add_exact_array(ctx.get(), action, planned.nr, static_cast<unsigned>(cmps.size()),
                                          cmps.empty() ? nullptr : cmps.data());
    if (rc < 0) {
      return Status::from_errno(-rc, "seccomp_rule_add(" + std::string(rule.syscall) + ")")
          .with_context("seccomp set " + std::string(planned.set));
    }
  }
  // libseccomp 2.5 exports only to an fd; a memfd keeps the program in memory.
  UniqueFd out(::memfd_create("oishell-seccomp", MFD_CLOEXEC));
  if (!out) return Status::from_errno(errno, "memfd_create");
  if (int rc = seccomp_export_bpf(ctx.get(), out.get()); rc < 0) return Status::from_errno(-rc, "seccomp_export_bpf");
  struct stat st;
  if (::fstat(out.get(), &st) != 0) return Status::from_errno(errno, "fstat(seccomp program)");
  if (st.st_size <= 0 || st.st_size % sizeof(sock_filter) != 0 ||
      st.st_size / sizeof(sock_filter) > BPF_MAXINSNS) {
    return Status::error("seccomp_export_bpf: a program of " + std::to_string(st.st_size) + " bytes");
  }
  program.instructions.resize(static_cast<size_t>(st.st_size) / sizeof(sock_filter));
  ssize_t n = ::pread(out.get(), program.instructions.data(), static_cast<size_t>(st.st_size), 0);
  if (n != st.st_size) return Status::from_errno(n < 0 ? errno : EIO, "pread(seccomp program)");
  return program;
}

}  // namespace oishell
