// seccomp: the program for a spec (prebuilt by the build when the spec is a built-in level, else compiled by
// libseccomp: runtime/seccomp_compile.h), loading it, and serving the user-notification fd on the supervisor side.
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

#include "runtime/seccomp_compile.h"
#include "runtime/seccomp_prebuilt.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

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

}  // namespace

Result<SeccompProgram> seccomp_compile(const SeccompSpec& spec) {
  if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
    return Status::error("seccomp: only native x86_64 is supported (the deny sets are written for it)");
  }
  // User notification needs kernel 5.0+ and libseccomp API level 5+ (level 6: with TSYNC, unused here).
  const bool notify = seccomp_api_get() >= 5;
  const std::vector<sock_filter>* prebuilt = notify ? prebuilt_seccomp_program(spec) : nullptr;
  if (prebuilt == nullptr) return seccomp_compile_with_libseccomp(spec, notify);
  auto reports = seccomp_plan_reports(spec);
  if (!reports) return reports.status();
  SeccompProgram program;
  program.instructions = *prebuilt;
  program.notify = true;
  program.reports = std::move(*reports);
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
  auto reports = seccomp_plan_reports(spec);
  // An unplannable spec was refused by seccomp_compile() already; every notification then answers EPERM.
  if (reports) reports_ = std::move(*reports);
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
  if (nr < reports_.brokered_by_syscall.size() && reports_.brokered_by_syscall[nr]) {
    if (broker_) {
      broker_(*req);  // answered by the broker, on its thread
      return Status::ok();
    }
    resp->id = req->id;
    resp->error = -EACCES;  // nobody to decide: fail closed
    if (seccomp_notify_respond(fd_.get(), resp) < 0 && errno != ENOENT) {
      return Status::from_errno(errno, "seccomp_notify_respond");
    }
    return Status::ok();
  }
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
