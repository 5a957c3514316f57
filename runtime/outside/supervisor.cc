// A running SupervisedSandbox (supervisor.h): its processes spawned, signalled, waited for and their exits recorded
// (with what each left changed of the protected paths), the host's integrity checked, the network policy narrowed,
// what it enforces said in words, and its shutdown. Bringing it up is supervisor_start.cc's; the monitor's poll is
// supervisor_monitor.cc's.
#include "runtime/outside/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <cerrno>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/startup_trace.h"
#include "runtime/broker/broker.h"
#include "runtime/fd_passing.h"
#include "runtime/outside/host_advice.h"
#include "policy/units.h"
#include "runtime/outside/idmapped_binds.h"
#include "runtime/inside/mount_plan.h"
#include "runtime/init_spec_codec.h"
#include "runtime/outside/layer_facts.h"
#include "runtime/inside/seccomp.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

void eventfd_set(int fd) {
  uint64_t one = 1;
  (void)!::write(fd, &one, sizeof one);
}
void eventfd_clear(int fd) {
  uint64_t value;
  (void)!::read(fd, &value, sizeof value);
}

}  // namespace

std::string format_duration_ms(uint64_t ms) {
  char buf[32];
  if (ms % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%llus", static_cast<unsigned long long>(ms / 1000));
  } else if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%llums", static_cast<unsigned long long>(ms));
  } else {
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  }
  return buf;
}

SupervisedSandbox::SupervisedSandbox(const SandboxSpec& spec, EventSink& events) : spec_(spec), events_(events) {}

SupervisedSandbox::~SupervisedSandbox() { shutdown(); }

std::vector<std::string> SupervisedSandbox::enforced() const {
  std::vector<std::string> out;
  out.push_back(root_caller_
                    ? std::string("namespaces: user (root inside, an unused id outside: root-only host files are "
                                  "unreadable, read-only paths included; the writable ones id-mapped), mount, pid, net, ipc, uts, cgroup")
                    : "namespaces: user (uid " + std::to_string(::geteuid()) +
                          " mapped to itself), mount, pid, net, ipc, uts, cgroup");
  out.push_back("filesystem: " + std::to_string(spec_.mounts.size()) +
                " mount steps on a read-only tmpfs root, old root detached");
  out.push_back("landlock: " + describe_landlock(layer_facts_));
  {
    const auto held = std::count_if(guarantees_.begin(), guarantees_.end(), [](const auto& g) { return g.held(); });
    out.push_back("guarantees: " + std::to_string(held) + " of " + std::to_string(guarantees_.size()) +
                  " held (oishell explain says by which layers)");
  }
  out.push_back("capabilities: none, securebits locked, no_new_privs");
  std::string sets;
  for (const auto& s : spec_.seccomp.deny_sets) sets += (sets.empty() ? "" : ", ") + s;
  out.push_back(std::string("seccomp: ") +
                (spec_.seccomp.level == SeccompLevel::strict ? "strict" : "default") + " (" + sets + ")" +
                (notifier_ ? ", denials reported" : ""));
  if (limits_) {
    for (const auto& m : limits_->mechanisms()) out.push_back("limits: " + m);
  }
  if (!init_start_.empty()) out.push_back("start: " + init_start_);
  {
    const uint64_t bytes = scratch_tmpfs_bytes(spec_);
    out.push_back("limits: tmpfs: /tmp, the home and /dev/shm share " + policy::format_size(bytes) + " (" +
                  std::to_string(scratch_tmpfs_inodes(bytes)) + " files; " +
                  (spec_.limits.memory_bytes ? "3/4 of the memory limit" : "half of RAM: no memory limit") +
                  ") on one size-limited tmpfs: ENOSPC beyond it, with or without cgroups");
  }
  if (spec_.limits.wall_time_ms) out.push_back("limits: wall time " + format_duration_ms(*spec_.limits.wall_time_ms) + " (supervisor)");
  out.push_back(spec_.network.mode == NetMode::none
                    ? std::string("network: none (loopback only)")
                    : "network: relay (http 127.0.0.1:" + std::to_string(spec_.network.http_proxy_port) +
                          ", socks5 127.0.0.1:" + std::to_string(spec_.network.socks_proxy_port) +
                          ", dns 127.0.0.1:" + std::to_string(spec_.network.dns_port) + ")");
  if (notifier_) {
    out.push_back(std::string("connect: every connect(2) performed by the supervisor (broker): ") +
                  (spec_.network.mode == NetMode::none
                       ? "no exit; "
                       : spec_.network.datagram_relay
                             ? "outside TCP decided by the policy; UDP from connected sockets through the datagram "
                               "relay to the hosts and ports of udp rules, no other UDP; "
                             : "outside TCP decided by the policy; no UDP (no udp rule); ") +
                  "unix sockets by inode (the sandbox's own, or network.unix: " +
                  std::to_string(spec_.network.unix_sockets.size()) + ")");
  }
  return out;
}

Status SupervisedSandbox::send(const control::ControlMessage& message, const std::vector<int>& fds) {
  std::lock_guard lock(send_mutex_);
  return send_message(control_.get(), control::encode(message), fds);
}

void SupervisedSandbox::on_init_gone() {
  init_gone_ = true;
  for (auto& [id, reply] : pending_spawns_) {
    if (!reply.done) reply = {true, ECHILD, "the sandbox is gone"};
  }
  std::vector<uint64_t> ids;
  for (const auto& [id, process] : live_) ids.push_back(id);
  for (uint64_t id : ids) {
    ExitInfo info;
    info.id = id;
    info.signal = SIGKILL;
    info.reason = live_[id].kill_reason.empty() ? (stopping_ ? "sandbox shut down" : "sandbox init died")
                                                : live_[id].kill_reason;
    record_exit(std::move(info));
  }
  changed_.notify_all();
}

void SupervisedSandbox::record_exit(ExitInfo info) {
  live_.erase(info.id);
  nlohmann::json event = {{"event", "exit"}, {"id", info.id}, {"status", info.shell_status()}};
  if (info.signal) {
    event["signal"] = info.signal;
  } else {
    event["exit_code"] = info.exit_code;
  }
  if (!info.reason.empty()) event["reason"] = info.reason;
  {
    std::lock_guard integrity(integrity_mutex_);  // always taken after mutex_, never before
    std::vector<std::string> changed = protect_.changes();
    if (!changed.empty()) event["protected_changed"] = changed;
    protected_reported_ = changed;
  }
  events_.emit(event);
  exits_.push_back(std::move(info));
  eventfd_set(exits_ready_.get());
}

Result<SupervisedSandbox::SentSpawn> SupervisedSandbox::send_spawn(const SpawnRequest& request) {
  if (request.argv.empty()) return Status::error("spawn: empty argv");
  control::ControlMessage message{control::Kind::spawn};
  message.argv = request.argv;
  std::vector<std::pair<std::string, std::string>> env = spec_.env;
  for (const auto& [key, value] : request.extra_env) {
    auto it = std::find_if(env.begin(), env.end(), [&](const auto& kv) { return kv.first == key; });
    if (it != env.end()) {
      it->second = value;
    } else {
      env.emplace_back(key, value);
    }
  }
  for (const auto& [key, value] : env) message.env.push_back(key + "=" + value);
  message.cwd = request.cwd.empty() ? spec_.cwd : request.cwd;
  message.number = request.ends_sandbox ? 1 : 0;

  SentSpawn sent;
  sent.program = request.argv[0];
  sent.cwd = message.cwd;
  Spawned& spawned = sent.spawned;
  std::vector<UniqueFd> child_ends;
  std::vector<int> fds;
  if (request.stdio == SpawnRequest::Stdio::pipes) {
    for (int i = 0; i < 3; ++i) {
      int p[2];
      if (::pipe2(p, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2");
      UniqueFd read_end(p[0]), write_end(p[1]);
      if (i == 0) {
        spawned.stdin_fd = std::move(write_end);
        child_ends.push_back(std::move(read_end));
      } else {
        (i == 1 ? spawned.stdout_fd : spawned.stderr_fd) = std::move(read_end);
        child_ends.push_back(std::move(write_end));
      }
      fds.push_back(child_ends.back().get());
    }
  } else {
    for (int i = 0; i < 3; ++i) {
      if (::fcntl(i, F_GETFD) >= 0) {
        fds.push_back(i);
        continue;
      }
      child_ends.emplace_back(::open("/dev/null", O_RDWR | O_CLOEXEC));
      if (!child_ends.back()) return Status::from_errno(errno, "open(\"/dev/null\")");
      fds.push_back(child_ends.back().get());
    }
  }
  fds.insert(fds.end(), request.extra_fds.begin(), request.extra_fds.end());
  if (request.terminal) message.data = encode_terminal_request(*request.terminal);

  std::lock_guard lock(mutex_);
  if (init_gone_ || shut_down_) return Status::from_errno(ECHILD, "spawn: the sandbox is no longer running");
  const uint64_t id = next_id_++;
  message.id = id;
  pending_spawns_[id] = {};
  if (Status status = send(message, fds); !status.is_ok()) {
    pending_spawns_.erase(id);
    return status.with_context("spawn");
  }
  sent.spawned.id = id;
  return sent;  // `child_ends` close here: init has its copies
}

template <typename Done>
bool SupervisedSandbox::wait_until(std::unique_lock<std::mutex>& lock, Done done) {
  while (!done()) {
    if (!monitor_on_caller_) {
      changed_.wait(lock);
      continue;
    }
    lock.unlock();
    const bool going = monitor_step();
    lock.lock();
    if (!going) return done();
  }
  return true;
}

Result<Spawned> SupervisedSandbox::await_spawn(SentSpawn sent) {
  const uint64_t id = sent.spawned.id;
  std::unique_lock lock(mutex_);
  if (!wait_until(lock, [&] { return pending_spawns_[id].done; })) {
    pending_spawns_.erase(id);
    return Status::error("spawn: the sandbox's monitor stopped before init answered");
  }
  SpawnReply reply = std::move(pending_spawns_[id]);
  pending_spawns_.erase(id);
  if (reply.error && reply.message == "terminal") {
    return Status::error("a terminal for the command inside the sandbox: " + errno_text(reply.error));
  }
  if (reply.error && reply.message == "cwd") {
    // Not the command's fault: no errno in the Status, so that callers do not report "command not found".
    return Status::error("working directory " + sent.cwd + " inside the sandbox: " + errno_text(reply.error));
  }
  if (reply.error) return Status::from_errno(reply.error, "exec \"" + sent.program + "\"");
  sent.spawned.terminal = std::move(reply.terminal);
  return std::move(sent.spawned);
}

Result<Spawned> SupervisedSandbox::spawn(const SpawnRequest& request) {
  auto sent = send_spawn(request);
  if (!sent.is_ok()) return sent.status();
  auto spawned = await_spawn(std::move(sent.value()));
  if (spawned.is_ok()) schedule_repo_snapshot();
  return spawned;
}

// The repo guard's snapshot is taken beside the sandbox once its first process has run for kSnapshotDelayMs, not
// in start-up's way (started with the sandbox, its thread cost 0.7 ms of `oishell run -- /bin/true`); a run that
// ends sooner takes it at its first check, on the supervisor's time (a small workspace: tens of microseconds). Its
// race with the sandbox is safe at any moment (runtime/outside/repo_guard.h); a later one only checks as new more of the
// repositories the run itself changed.
void SupervisedSandbox::start_repo_snapshot(bool now) {
  std::call_once(snapshot_once_, [&] {
    if (!repo_guard_) return;
    if (now) {
      repo_guard_->snapshot_now();
    } else {
      repo_guard_->snapshot_async();
    }
  });
}

Result<Spawned> SupervisedSandbox::first_process() {
  if (!first_process_) return Status::error("first_process: no first process was requested in SandboxOptions");
  SentSpawn sent = std::move(*first_process_);
  first_process_.reset();
  auto spawned = await_spawn(std::move(sent));
  if (spawned.is_ok()) schedule_repo_snapshot();
  return spawned;
}

Status SupervisedSandbox::signal(uint64_t id, int sig) {
  std::lock_guard lock(mutex_);
  if (!live_.count(id)) return Status::from_errno(ESRCH, "signal: process " + std::to_string(id));
  control::ControlMessage message{control::Kind::signal};
  message.id = id;
  message.number = sig;
  return send(message);
}

std::optional<ExitInfo> SupervisedSandbox::next_exit() {
  std::lock_guard lock(mutex_);
  if (exits_.empty()) return std::nullopt;
  ExitInfo info = std::move(exits_.front());
  exits_.pop_front();
  if (exits_.empty()) eventfd_clear(exits_ready_.get());
  return info;
}

Result<ExitInfo> SupervisedSandbox::wait(uint64_t id) {
  std::unique_lock lock(mutex_);
  for (;;) {
    for (auto it = exits_.begin(); it != exits_.end(); ++it) {
      if (it->id != id) continue;
      ExitInfo info = std::move(*it);
      exits_.erase(it);
      if (exits_.empty()) eventfd_clear(exits_ready_.get());
      return info;
    }
    if (!live_.count(id)) return Status::from_errno(ECHILD, "wait: no running process " + std::to_string(id));
    const size_t exits_before = exits_.size();
    if (!wait_until(lock, [&] { return exits_.size() != exits_before || !live_.count(id); })) {
      return Status::error("wait: the sandbox's monitor stopped");
    }
  }
}

void SupervisedSandbox::start_repo_guard() {
  std::vector<std::string> roots, skip;
  for (const MountStep& step : spec_.mounts) {
    if (step.kind == MountStep::Kind::bind_rw) roots.push_back(step.target);  // a policy path: target == source
    if (step.kind == MountStep::Kind::protect) skip.push_back(step.target);   // read-only inside
  }
  if (!roots.empty()) repo_guard_ = std::make_unique<RepoGuard>(roots, RepoGuard::start_time(), skip);
}

void SupervisedSandbox::report_host_integrity(bool with_protected) {
  std::lock_guard lock(integrity_mutex_);
  if (with_protected) {
    std::vector<std::string> fresh;
    for (const auto& change : protect_.changes()) {
      if (std::find(protected_reported_.begin(), protected_reported_.end(), change) != protected_reported_.end()) {
        continue;
      }
      protected_reported_.push_back(change);
      fresh.push_back(change);
    }
    if (!fresh.empty()) events_.emit({{"event", "protected_changed"}, {"paths", fresh}});
  }
  if (!repo_guard_) return;
  start_repo_snapshot(/*now=*/true);  // no-op when one was taken
  for (const RepoFinding& finding : repo_guard_->check()) {
    events_.emit({{"event", "repo_neutralised"},
                  {"path", finding.path},
                  {"found", finding.found},
                  {"action", finding.action}});
  }
}

void SupervisedSandbox::check_host_integrity() { report_host_integrity(true); }

void SupervisedSandbox::answer_ask(uint64_t ask_id, relay::AskAnswer answer) {
  if (relay_) relay_->answer(ask_id, answer);
}

Result<relay::NetworkUpdate> SupervisedSandbox::update_network(const NetworkSpec& network) {
  if (!relay_) return Status::error("the sandbox's relay is not running: its network policy cannot change");
  return relay_->update_network(network);
}

std::vector<PathObservation> SupervisedSandbox::observed_paths() const {
  return path_observer_ ? path_observer_->observations() : std::vector<PathObservation>{};
}

ResourcePeaks SupervisedSandbox::resource_peaks() const {
  ResourcePeaks peaks;
  if (!limits_) return peaks;
  auto read_number = [](const std::string& path) -> std::optional<uint64_t> {
    std::ifstream in(path);
    uint64_t value = 0;
    if (in >> value) return value;
    return std::nullopt;
  };
  for (const auto& dir : limits_->cgroup_dirs()) {
    if (!peaks.memory_bytes) peaks.memory_bytes = read_number(dir + "/memory.max_usage_in_bytes");
    if (!peaks.memory_bytes) peaks.memory_bytes = read_number(dir + "/memory.peak");
    if (!peaks.processes) peaks.processes = read_number(dir + "/pids.peak");
  }
  return peaks;
}

void SupervisedSandbox::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (shut_down_) return;
    shut_down_ = true;
    stopping_ = true;  // exits reported from here on say "sandbox shut down"
  }
  if (init_pidfd_) sys::pidfd_send_signal(init_pidfd_.get(), SIGKILL, nullptr, 0);
  // While the kernel tears the sandbox down (in init's exit), the supervisor stops its own threads.
  if (monitor_thread_.joinable()) {
    eventfd_set(wake_.get());
    monitor_thread_.join();
  }
  if (relay_) relay_->stop();
  trace_startup("supervisor: threads stopped");
  if (init_pid_ > 0) {
    // init is pid 1 of its namespace: this returns once every process inside is gone.
    while (::waitpid(init_pid_, nullptr, 0) < 0 && errno == EINTR) {}
    init_pid_ = -1;
  }
  trace_startup("supervisor: init reaped");
  {
    std::lock_guard lock(mutex_);
    if (!init_gone_) on_init_gone();
  }
  notifier_.reset();
  if (limits_) limits_->teardown();
  init_group_.remove();  // init's group when the limits never took it (a failed start)
  trace_startup("supervisor: cgroups removed");
  // The sandbox's mount namespace, its last reference: the janitor drops it (the kernel unmounting every mount of
  // the sandbox, unreachable by anything now) beside the checks below and this process's exit; without a janitor
  // (no cgroups), this process does, last.
  UniqueFd mntns = janitor_.release(std::move(sandbox_mntns_));
  trace_startup("supervisor: janitor released");
  // Nothing inside runs any more: what the run left for the host is final.
  report_host_integrity(true);
}

}  // namespace oishell
