#pragma once
// seccomp: architecture check, deny sets by purpose, denials reported through user notification.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"
#include "runtime/events.h"

namespace oishell {

// A compiled filter: classic BPF for the native ABI (foreign ABIs, x32 and i386, are killed). Reportable denials
// go to a user-notification listener (`notify`); the supervisor serves it with SeccompNotifier, which answers each
// with the set's errno and emits a "denied" event. Calls whose denial needs no report (clone3 -> ENOSYS, so libc
// falls back to clone) return their errno directly.
// What the notifier answers for each reported syscall: its errno and the name of its deny set (by number).
struct SeccompReports {
  std::vector<int> errno_by_syscall;
  std::vector<std::string> set_by_syscall;
  std::vector<bool> brokered_by_syscall;  // seccomp_sets::broker_rules(): handed to the broker, not denied
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

// Supervisor side of the notify fd. handle_ready() is called when the fd is readable; it answers one
// notification. Thread-compatible; owned by the supervisor loop.
class SeccompNotifier {
 public:
  // Takes a notification of a brokered call (SeccompReports::brokered_by_syscall); the handler answers it later.
  using BrokerHandler = std::function<void(const seccomp_notif&)>;
  SeccompNotifier(UniqueFd notify_fd, SeccompReports reports, EventSink& events);
  // Plans `spec` again for its reports (the supervisor uses the compiled program's).
  SeccompNotifier(UniqueFd notify_fd, const SeccompSpec& spec, EventSink& events);
  int fd() const { return fd_.get(); }
  // Without a handler, a brokered call is answered EACCES (fail closed).
  void set_broker(BrokerHandler handler) { broker_ = std::move(handler); }
  // Returns an error only when the fd is broken (e.g. every filtered process is gone: ENOENT is not an error).
  Status handle_ready();

 private:
  UniqueFd fd_;
  EventSink& events_;
  SeccompReports reports_;
  BrokerHandler broker_;
};

}  // namespace oishell
