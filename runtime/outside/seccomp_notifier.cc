#include "runtime/outside/seccomp_notifier.h"

#include <seccomp.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "policy/seccomp_sets.h"
#include "runtime/inside/seccomp_compile.h"

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

// Whether a reported deny rule of the call's syscall holds for its arguments (the filter's own comparisons, on the
// register values the notification carries: nothing the caller can change after the fact).
bool SeccompNotifier::denied_by_a_rule(const seccomp_notif& n) const {
  const size_t nr = static_cast<size_t>(n.data.nr);
  if (nr >= reports_.denies_by_syscall.size()) return false;
  for (const seccomp_sets::Rule* rule : reports_.denies_by_syscall[nr]) {
    bool all = true;
    for (const auto& c : rule->when) {
      const uint64_t arg = c.arg < 6 ? n.data.args[c.arg] : 0;
      switch (c.op) {
        case seccomp_sets::ArgCheck::Op::masked_eq: all = all && (arg & c.mask) == c.value; break;
        case seccomp_sets::ArgCheck::Op::ne: all = all && arg != c.value; break;
        case seccomp_sets::ArgCheck::Op::ge: all = all && arg >= c.value; break;
      }
    }
    if (all) return true;
  }
  return false;
}

SeccompNotifier::SeccompNotifier(UniqueFd notify_fd, SeccompReports reports, EventSink& events)
    : fd_(std::move(notify_fd)), events_(events), reports_(std::move(reports)) {}

SeccompNotifier::SeccompNotifier(UniqueFd notify_fd, const SeccompSpec& spec, EventSink& events)
    : fd_(std::move(notify_fd)), events_(events) {
  auto reports = seccomp_plan_reports(spec);
  // An unplannable spec was refused by seccomp_compile() already; every notification then answers EPERM.
  if (reports) reports_ = std::move(*reports);
}

SeccompNotifier::~SeccompNotifier() { emit_held(repeats_.take_held()); }

// A summary of identical denials not reported one by one: the last one's fields, and how many were held back.
void SeccompNotifier::emit_held(std::vector<std::pair<nlohmann::json, uint64_t>> held) {
  for (auto& [event, count] : held) {
    event["repeated"] = count;
    event["summary"] = true;
    events_.emit(event);
  }
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
  if (nr < reports_.observed_by_syscall.size() && reports_.observed_by_syscall[nr] && !denied_by_a_rule(*req)) {
    if (observer_) {
      observer_(*req);
      return Status::ok();
    }
    // Observation only: the call was never the filter's to deny.
    resp->id = req->id;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
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
  nlohmann::json denied = {{"event", "denied"},
                           {"kind", "syscall"},
                           {"syscall", syscall_name(req->data.nr)},
                           {"set", set},
                           {"errno", errno_name(err)},
                           {"pid", req->pid}};
  // A call of the floor (io_uring, set-id modes): learn and the agent say no policy can allow it, and why.
  if (std::string why = seccomp_sets::why_not_liftable(denied["syscall"].get<std::string>()); !why.empty()) {
    denied["not_allowable"] = why;
  }
  const std::string key = denied["syscall"].get<std::string>() + " " + set + " " + errno_name(err);
  if (auto held = repeats_.admit(key, denied)) {
    if (*held) denied["repeated"] = *held;
    events_.emit(denied);
  }
  emit_held(repeats_.take_evicted());

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
