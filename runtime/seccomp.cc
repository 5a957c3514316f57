// seccomp: compiles the deny sets of runtime/seccomp_sets into a libseccomp filter (default allow, native x86_64
// only, foreign ABIs killed) and serves the user-notification fd on the supervisor side.
#include "runtime/seccomp.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/seccomp_sets.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

struct PlannedRule {
  int nr;
  std::string_view set;
  const seccomp_sets::Rule* rule;
};

// The active rules for `spec`: its sets (every default set when the list is empty; strict adds strict_extras),
// minus the namespaces set when nested namespaces are allowed, minus allow_syscalls. Unknown names are errors.
Result<std::vector<PlannedRule>> plan(const SeccompSpec& spec) {
  std::vector<std::string_view> names(spec.deny_sets.begin(), spec.deny_sets.end());
  if (names.empty()) names = seccomp_sets::default_set_names();
  if (spec.level == SeccompLevel::strict) names.push_back("strict_extras");
  for (const auto& allowed : spec.allow_syscalls) {
    if (seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, allowed.c_str()) < 0) {
      return Status::error("seccomp: allow_syscalls names an unknown x86_64 syscall `" + allowed + "`");
    }
  }
  std::vector<PlannedRule> rules;
  std::vector<std::string_view> seen;
  for (std::string_view name : names) {
    const seccomp_sets::DenySet* set = seccomp_sets::find(name);
    if (set == nullptr) return Status::error("seccomp: unknown deny set `" + std::string(name) + "`");
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(name);
    if (name == "namespaces" && spec.nested_namespaces) continue;
    for (const auto& rule : set->rules) {
      if (std::find(spec.allow_syscalls.begin(), spec.allow_syscalls.end(), rule.syscall) !=
          spec.allow_syscalls.end()) {
        continue;
      }
      int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, rule.syscall);
      if (nr < 0) return Status::error(std::string("seccomp: syscall `") + rule.syscall + "` unknown to libseccomp");
      rules.push_back({nr, set->name, &rule});
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

std::string syscall_name(int nr) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
  std::string out = name ? name : "syscall " + std::to_string(nr);
  std::free(name);
  return out;
}

std::string errno_name(int err) {
  const char* name = strerrorname_np(err);
  return name ? name : std::to_string(err);
}

SeccompReports reports_of(const std::vector<PlannedRule>& rules) {
  SeccompReports reports;
  for (const auto& planned : rules) {
    if (!planned.rule->report) continue;
    size_t nr = static_cast<size_t>(planned.nr);
    if (reports.errno_by_syscall.size() <= nr) {
      reports.errno_by_syscall.resize(nr + 1, 0);
      reports.set_by_syscall.resize(nr + 1);
    }
    if (reports.errno_by_syscall[nr] != 0) continue;  // first set wins (the table has no conflicting errnos)
    reports.errno_by_syscall[nr] = planned.rule->err;
    reports.set_by_syscall[nr] = std::string(planned.set);
  }
  return reports;
}

}  // namespace

Result<SeccompProgram> seccomp_compile(const SeccompSpec& spec) {
  if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
    return Status::error("seccomp: only native x86_64 is supported (the deny sets are written for it)");
  }
  auto rules = plan(spec);
  if (!rules) return rules.status();

  SeccompProgram program;
  program.reports = reports_of(*rules);
  // User notification needs kernel 5.0+ and libseccomp API level 5+ (level 6: with TSYNC, unused here).
  program.notify = seccomp_api_get() >= 5;
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

std::string seccomp_program_to_bytes(const SeccompProgram& program) {
  return std::string(reinterpret_cast<const char*>(program.instructions.data()),
                     program.instructions.size() * sizeof(sock_filter));
}

Result<SeccompProgram> seccomp_program_from_bytes(const std::string& bytes, bool notify) {
  if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0 || bytes.size() / sizeof(sock_filter) > BPF_MAXINSNS) {
    return Status::error("seccomp: a program of " + std::to_string(bytes.size()) + " bytes is not a BPF program");
  }
  SeccompProgram program;
  program.notify = notify;
  program.instructions.resize(bytes.size() / sizeof(sock_filter));
  std::memcpy(program.instructions.data(), bytes.data(), bytes.size());
  return program;
}

Result<UniqueFd> seccomp_load_program(const SeccompProgram& program) {
  if (program.instructions.empty()) return Status::error("seccomp: empty program");
  sock_fprog fprog{static_cast<unsigned short>(program.instructions.size()),
                   const_cast<sock_filter*>(program.instructions.data())};
  const unsigned flags = program.notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
  int rc = sys::seccomp(SECCOMP_SET_MODE_FILTER, flags, &fprog);
  if (rc < 0) {
    return Status::from_errno(errno, program.notify ? "seccomp(SET_MODE_FILTER, NEW_LISTENER)"
                                                    : "seccomp(SET_MODE_FILTER)");
  }
  if (!program.notify) return UniqueFd();
  return UniqueFd(rc);  // the kernel made it O_CLOEXEC
}

Result<UniqueFd> seccomp_apply(const SeccompSpec& spec) {
  auto program = seccomp_compile(spec);
  if (!program) return program.status();
  return seccomp_load_program(*program);
}

SeccompNotifier::SeccompNotifier(UniqueFd notify_fd, SeccompReports reports, EventSink& events)
    : fd_(std::move(notify_fd)), events_(events), reports_(std::move(reports)) {}

SeccompNotifier::SeccompNotifier(UniqueFd notify_fd, const SeccompSpec& spec, EventSink& events)
    : fd_(std::move(notify_fd)), events_(events) {
  auto rules = plan(spec);
  // An unplannable spec was refused by seccomp_compile() already; every notification then answers EPERM.
  if (rules) reports_ = reports_of(*rules);
}

Status SeccompNotifier::handle_ready() {
  seccomp_notif* req = nullptr;
  seccomp_notif_resp* resp = nullptr;
  if (int rc = seccomp_notify_alloc(&req, &resp); rc < 0) return Status::from_errno(-rc, "seccomp_notify_alloc");
  std::unique_ptr<seccomp_notif, void (*)(seccomp_notif*)> req_owner(req, [](seccomp_notif* r) {
    seccomp_notify_free(r, nullptr);
  });
  std::unique_ptr<seccomp_notif_resp, void (*)(seccomp_notif_resp*)> resp_owner(resp, [](seccomp_notif_resp* r) {
    seccomp_notify_free(nullptr, r);
  });

  errno = 0;
  if (seccomp_notify_receive(fd_.get(), req) < 0) {
    // libseccomp reports -ECANCELED; the ioctl's errno survives. ENOENT: the caller died or was interrupted
    // between poll and receive, not a broken fd.
    int err = errno;
    if (err == ENOENT || err == EINTR || err == EAGAIN) return Status::ok();
    return Status::from_errno(err, "seccomp_notify_receive");
  }
  size_t nr = static_cast<size_t>(req->data.nr);
  const auto& errnos = reports_.errno_by_syscall;
  const auto& sets = reports_.set_by_syscall;
  int err = nr < errnos.size() && errnos[nr] != 0 ? errnos[nr] : EPERM;
  std::string set = nr < sets.size() && !sets[nr].empty() ? sets[nr] : "unknown";

  // Reported before the answer: the blocked call cannot return (and the code that made it cannot finish) before
  // its denial is on its way to the user and the model.
  events_.emit({{"event", "denied"},
                {"kind", "syscall"},
                {"syscall", syscall_name(req->data.nr)},
                {"set", set},
                {"errno", errno_name(err)},
                {"pid", req->pid}});

  // The answer is always a denial, so nothing is read from the caller's memory and the id check cannot race in a
  // way that matters; it still tells a live caller from one that died while waiting.
  bool alive = seccomp_notify_id_valid(fd_.get(), req->id) == 0;
  resp->id = req->id;
  resp->val = 0;
  resp->error = -err;
  resp->flags = 0;
  if (alive && seccomp_notify_respond(fd_.get(), resp) < 0 && errno != ENOENT) {
    return Status::from_errno(errno, "seccomp_notify_respond");
  }
  return Status::ok();
}

}  // namespace oishell
