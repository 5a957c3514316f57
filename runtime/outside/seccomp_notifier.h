#pragma once
// The supervisor's side of the seccomp user-notification fd that sandbox init's filter (runtime/inside/seccomp.h)
// reports to: a denied call is answered with its set's errno and a "denied" event; a brokered call (connect and
// the implicit connects) goes to the connect broker (runtime/broker/broker.h).
#include <linux/seccomp.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"
#include "runtime/inside/seccomp.h"
#include "runtime/outside/events.h"
#include "runtime/outside/repeat_window.h"

namespace oishell {

// Supervisor side of the notify fd. handle_ready() is called when the fd is readable; it answers one
// notification. Thread-compatible; owned by the supervisor loop.
class SeccompNotifier {
 public:
  // Takes a notification of a brokered call (SeccompReports::brokered_by_syscall); the handler answers it later.
  using BrokerHandler = std::function<void(const seccomp_notif&)>;
  SeccompNotifier(UniqueFd notify_fd, SeccompReports reports, EventSink& events);
  // Plans `spec` again for its reports (the supervisor uses the compiled program's).
  SeccompNotifier(UniqueFd notify_fd, const SeccompSpec& spec, EventSink& events);
  // Reports the identical denials still held back (repeats_).
  ~SeccompNotifier();
  SeccompNotifier(const SeccompNotifier&) = delete;
  SeccompNotifier& operator=(const SeccompNotifier&) = delete;
  int fd() const { return fd_.get(); }
  // Without a handler, a brokered call is answered EACCES (fail closed).
  void set_broker(BrokerHandler handler) { broker_ = std::move(handler); }
  // Takes a notification of an observed call (SeccompReports::observed_by_syscall, `oishell learn`); the handler
  // answers it (with CONTINUE). Without one, such a call is let through unrecorded.
  void set_observer(BrokerHandler handler) { observer_ = std::move(handler); }
  // Returns an error only when the fd is broken (e.g. every filtered process is gone: ENOENT is not an error).
  Status handle_ready();

 private:
  bool denied_by_a_rule(const seccomp_notif& notification) const;
  void emit_held(std::vector<std::pair<nlohmann::json, uint64_t>> held);
  UniqueFd fd_;
  EventSink& events_;
  SeccompReports reports_;
  BrokerHandler broker_;
  BrokerHandler observer_;
  // The same call denied by the same set is reported once a second at most: a loop of denied calls inside cannot
  // grow the events log without bound. The repeats in between are counted on the next report ("repeated").
  RepeatWindow<nlohmann::json> repeats_{std::chrono::seconds(1)};
};

}  // namespace oishell
