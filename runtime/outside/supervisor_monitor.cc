// The supervisor's monitor (runtime/outside/supervisor.h): one poll over init's control socket, the seccomp notifier, the
// forwarded signals and, until the relay's thread runs, the relay's listeners; then serving what came.
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/fd_passing.h"
#include "runtime/outside/supervisor.h"

namespace oishell {
namespace {

void eventfd_wake(int fd) {
  uint64_t one = 1;
  (void)!::write(fd, &one, sizeof one);
}

int64_t now_ms() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

void SupervisedSandbox::schedule_repo_snapshot() {
  {
    std::lock_guard lock(mutex_);
    if (!repo_guard_ || snapshot_at_ms_) return;
    snapshot_at_ms_ = now_ms() + kSnapshotDelayMs;
  }
  if (!monitor_on_caller_) eventfd_wake(wake_.get());  // the monitor thread recomputes its timeout
}

void SupervisedSandbox::set_monitor_client(MonitorClient* client) {
  {
    std::lock_guard lock(mutex_);
    monitor_client_ = client;
  }
  wake_monitor();
}

void SupervisedSandbox::wake_monitor() {
  if (wake_) eventfd_wake(wake_.get());
}

void SupervisedSandbox::monitor() {
  while (monitor_step()) {
  }
}

bool SupervisedSandbox::monitor_step() {
  int timeout = -1;
  bool init_gone;
  MonitorClient* client;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    init_gone = init_gone_;
    client = monitor_client_;
    int64_t now = now_ms();
    if (snapshot_at_ms_) timeout = static_cast<int>(std::max<int64_t>(0, *snapshot_at_ms_ - now));
    for (const auto& [id, process] : live_) {
      if (!process.deadline_ms || !process.kill_reason.empty()) continue;
      int64_t left = std::max<int64_t>(0, *process.deadline_ms - now);
      if (timeout < 0 || left < timeout) timeout = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
  }
  std::vector<pollfd> fds = {{wake_.get(), POLLIN, 0},
                             {init_gone ? -1 : control_.get(), POLLIN, 0},
                             {notifier_ok_ && !notifications_on_relay_ ? notifier_->fd() : -1, POLLIN, 0},
                             {signals_ ? signals_.get() : -1, POLLIN, 0},
                             {relay_ && !relay_serving_ ? relay_->activity_fd() : -1, POLLIN, 0}};
  constexpr size_t kOwn = 5;
  if (client) client->add_pollfds(fds);
  if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return false;
  if (client && fds.size() > kOwn) client->on_pollfds(fds.data() + kOwn, fds.size() - kOwn);
  if (fds[0].revents & POLLIN) {
    uint64_t count;
    (void)!::read(wake_.get(), &count, sizeof count);
  }
  if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) on_control_message();
  if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) {
    if (!notifier_->handle_ready().is_ok()) notifier_ok_ = false;
  }
  if (fds[3].revents & POLLIN) on_forwarded_signal();
  if (fds[4].revents & POLLIN) on_relay_activity();
  enforce_deadlines();
  bool snapshot_due = false;
  {
    std::lock_guard lock(mutex_);
    if (snapshot_at_ms_ && *snapshot_at_ms_ <= now_ms()) {
      snapshot_at_ms_.reset();
      snapshot_due = true;
    }
  }
  if (snapshot_due) start_repo_snapshot(/*now=*/false);
  return true;
}

// The sandbox's first connection: the relay's thread takes over its listeners from here. Should the thread not
// start, the relay is stopped, which closes the listeners: the sandbox's connections are refused, never left
// hanging.
void SupervisedSandbox::on_relay_activity() {
  relay_serving_ = true;
  // From now on the relay's thread reads the seccomp listener (denials and brokered calls): a brokered connect
  // then reaches the broker without waking this thread first.
  if (notifier_ok_ && broker_started_ &&
      relay_->watch_notifications(notifier_->fd(), [this] { return notifier_->handle_ready().is_ok(); }).is_ok()) {
    notifications_on_relay_ = true;
  }
  if (Status started = relay_->serve(); !started.is_ok()) {
    events_.emit({{"event", "net.error"}, {"host", ""}, {"port", 0}, {"reason", "relay: " + started.message()}});
    relay_->stop();  // refuses what it had queued; later brokered calls are refused by the notifier (no handler)
    notifications_on_relay_ = false;  // the monitor reads the listener again
    notifier_->set_broker(nullptr);
  }
}

// A signal that comes before the first process is live (its spawn is on its way to init, or init has not reported
// it yet) is held and sent the moment it is reported (on_control_message): never dropped.
void SupervisedSandbox::on_forwarded_signal() {
  signalfd_siginfo info;
  while (::read(signals_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    std::lock_guard lock(mutex_);
    if (first_process_live_) {
      forward_to_first_process(static_cast<int>(info.ssi_signo));
    } else {
      held_signals_.push_back(static_cast<int>(info.ssi_signo));
    }
  }
}

void SupervisedSandbox::forward_to_first_process(int sig) {
  if (init_gone_ || !live_.count(first_process_id_)) return;  // it ended: nothing to stop
  control::ControlMessage message{control::Kind::signal};
  message.id = first_process_id_;
  message.number = sig;
  (void)send(message);
}

void SupervisedSandbox::on_control_message() {
  auto message = receive_message(control_.get());
  std::lock_guard lock(mutex_);
  if (!message.is_ok() || message->payload.empty()) {
    on_init_gone();
    return;
  }
  auto decoded = control::decode(message->payload);
  if (!decoded.is_ok()) return;
  const control::ControlMessage& m = *decoded;
  switch (m.kind) {
    case control::Kind::spawned: {
      Process process;
      process.pid = m.number;
      if (spec_.limits.wall_time_ms) process.deadline_ms = now_ms() + static_cast<int64_t>(*spec_.limits.wall_time_ms);
      live_[m.id] = process;
      pending_spawns_[m.id].done = true;
      if (!message->fds.empty()) pending_spawns_[m.id].terminal = std::move(message->fds[0]);
      if (first_process_id_ && m.id == first_process_id_) {
        // Init handles messages in order: the signal reaches the process it has just started.
        first_process_live_ = true;
        for (int sig : held_signals_) forward_to_first_process(sig);
        held_signals_.clear();
      }
      break;
    }
    case control::Kind::spawn_failed:
      pending_spawns_[m.id] = {true, m.number, m.step == "cwd" || m.step == "terminal" ? m.step : "", {}};
      break;
    case control::Kind::exited: {
      if (!live_.count(m.id)) break;
      ExitInfo info;
      info.id = m.id;
      if (WIFSIGNALED(m.number)) {
        info.signal = WTERMSIG(m.number);
      } else {
        info.exit_code = WEXITSTATUS(m.number);
      }
      info.reason = live_[m.id].kill_reason;
      if (info.reason.empty() && info.signal == SIGKILL && limits_) {
        info.reason = limits_->kill_reason();
        if (!info.reason.empty()) {
          events_.emit({{"event", "limit"}, {"kind", "memory"}, {"id", m.id}, {"reason", info.reason}});
        }
      }
      record_exit(std::move(info));
      break;
    }
    case control::Kind::spec:
    case control::Kind::joined:
    case control::Kind::spawn:
    case control::Kind::signal:
    case control::Kind::fail:
    case control::Kind::listeners:
    case control::Kind::ready:
      break;
  }
  changed_.notify_all();
}

void SupervisedSandbox::enforce_deadlines() {
  std::lock_guard lock(mutex_);
  if (init_gone_) return;
  int64_t now = now_ms();
  for (auto& [id, process] : live_) {
    if (!process.deadline_ms || !process.kill_reason.empty() || *process.deadline_ms > now) continue;
    process.kill_reason = "wall time limit " + format_duration_ms(*spec_.limits.wall_time_ms);
    events_.emit({{"event", "limit"}, {"kind", "wall_time"}, {"id", id}, {"reason", process.kill_reason}});
    control::ControlMessage kill{control::Kind::signal};
    kill.id = id;
    kill.number = SIGKILL;
    (void)send(kill);
  }
}

}  // namespace oishell
