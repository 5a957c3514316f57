#pragma once
// The supervisor side of a Sandbox: clone of sandbox init, the control socket, and a monitor (its own thread, or
// the caller's wait() with SandboxOptions::monitor_on_caller; runtime/outside/supervisor_monitor.cc) that reads init's
// reports (spawn replies, exits), serves seccomp notifications, enforces wall time, forwards signals and starts
// the relay's thread at the sandbox's first connection.
#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "policy/guarantees.h"
#include "runtime/broker/name_map.h"
#include "runtime/outside/cgroup_janitor.h"
#include "runtime/outside/https_setup.h"
#include "runtime/control_protocol.h"
#include "runtime/outside/limits.h"
#include "runtime/outside/protect_watch.h"
#include "runtime/outside/repo_guard.h"
#include "runtime/outside/sandbox.h"
#include "runtime/inside/seccomp.h"
#include "runtime/outside/seccomp_notifier.h"

namespace oishell {

class SupervisedSandbox final : public Sandbox {
 public:
  // Preconditions: called on a thread that outlives the sandbox (init's PDEATHSIG follows the cloning thread);
  // no other thread of this process may be inside malloc or hold a lock init needs (init is a raw clone3 of this
  // process, without fork()'s atfork handlers): create sandboxes before starting busy threads.
  static Result<std::unique_ptr<Sandbox>> start(const SandboxSpec& spec, EventSink& events, SandboxOptions options);
  ~SupervisedSandbox() override;

  Result<Spawned> spawn(const SpawnRequest& request) override;
  Result<Spawned> first_process() override;
  Status signal(uint64_t id, int sig) override;
  int wait_fd() const override { return exits_ready_.get(); }
  std::optional<ExitInfo> next_exit() override;
  Result<ExitInfo> wait(uint64_t id) override;
  void answer_ask(uint64_t ask_id, relay::AskAnswer answer) override;
  Result<relay::NetworkUpdate> update_network(const NetworkSpec& network) override;
  void check_host_integrity() override;
  std::vector<PathObservation> observed_paths() const override;
  ResourcePeaks resource_peaks() const override;
  void set_monitor_client(MonitorClient* client) override;
  void wake_monitor() override;
  const std::vector<std::string>& degradations() const override { return degradations_; }
  void shutdown() override;

 private:
  struct Process {
    pid_t pid = 0;
    std::optional<int64_t> deadline_ms;  // CLOCK_MONOTONIC
    std::string kill_reason;             // set when the supervisor killed it (wall time)
  };
  // A spawn request sent to init whose reply has not been read yet.
  struct SentSpawn {
    Spawned spawned;  // id set; the supervisor's pipe ends in pipes mode
    std::string program;
    std::string cwd;
  };
  struct SpawnReply {
    bool done = false;
    int error = 0;
    std::string message;
    UniqueFd terminal;  // the terminal's master, for SpawnRequest::terminal
  };

  SupervisedSandbox(const SandboxSpec& spec, EventSink& events);
  Status launch(SandboxOptions options);
  // The supervisor's share of the set-up, done while init builds its mount tree: cgroups and their janitor, the
  // seccomp program, `joined`, and the relay (not yet serving).
  Status prepare_beside_init(SandboxOptions& options, std::unique_ptr<relay::Relay>* relay);
  // The connect broker on the relay's loop, fed by the seccomp notifier.
  Status start_broker();
  // A supervisor-side step failed: if init had failed first (its `fail` message explains more), that is the error.
  Status init_failure_or(Status status);
  Status send(const control::ControlMessage& message, const std::vector<int>& fds = {});
  Result<SentSpawn> send_spawn(const SpawnRequest& request);
  Result<Spawned> await_spawn(SentSpawn sent);
  Result<control::ControlMessage> receive_setup_message(std::vector<UniqueFd>* fds);
  // The monitor thread's body: monitor_step() until it says stop.
  void monitor();
  // One wait for anything the monitor serves (up to the nearest wall-time deadline), then serving what came.
  // False when the monitor must stop (shutdown, or poll failed).
  bool monitor_step();
  // Blocks until `done()` holds (checked with mutex_ held): on changed_ when a monitor thread runs, else by
  // running monitor_step() on this thread. False when the monitor stopped first.
  template <typename Done>
  bool wait_until(std::unique_lock<std::mutex>& lock, Done done);
  void on_control_message();
  void on_relay_activity();
  void on_forwarded_signal();
  // With mutex_ held: sends `sig` to the first process's group, if it still runs.
  void forward_to_first_process(int sig);
  // A forwarded signal is pending (set-up stops for it; it is left pending for the caller to take).
  bool forwarded_signal_pending() const;
  void on_init_gone();  // with mutex_ held
  void record_exit(ExitInfo info);  // with mutex_ held
  void enforce_deadlines();
  // The repo guard of the writable binds (before anything inside can write); its snapshot starts later.
  void start_repo_guard();
  // Takes the repo guard's snapshot (once): beside the sandbox, or `now` on this thread.
  void start_repo_snapshot(bool now);
  // After the first process started: the snapshot is due kSnapshotDelayMs later (monitor_step starts it).
  void schedule_repo_snapshot();
  static constexpr int64_t kSnapshotDelayMs = 20;
  // Protected paths changed and not yet reported (`protected_changed`), then the repo guard's findings
  // (`repo_neutralised`, one event each).
  void report_host_integrity(bool with_protected);
  std::vector<std::string> enforced() const;

  const SandboxSpec spec_;
  EventSink& events_;
  ProtectWatch protect_;
  std::unique_ptr<ResourceLimits> limits_;
  CgroupJanitor janitor_;  // removes the cgroups should this process be killed
  // The group init was born in (or made for it before a clone that refused it), until limits_ takes it.
  cgroup::OwnedCgroup init_group_;
  bool init_born_ = false;
  std::string init_start_;  // InitProcess::start_note(), for the `start` event
  // The synthetic addresses the DNS stub gives out (runtime/broker/name_map.h); before relay_, which uses it.
  broker::NameMap name_map_;
  std::unique_ptr<relay::Relay> relay_;
  std::unique_ptr<SeccompNotifier> notifier_;
  std::unique_ptr<PathObserver> path_observer_;  // SeccompSpec::observe_paths only
  SeccompReports seccomp_reports_;  // from the compiled program, for notifier_
  UniqueFd control_;
  UniqueFd init_pidfd_;
  UniqueFd sandbox_netns_;   // from init: the sandbox's network and user namespaces (the connect broker's)
  UniqueFd sandbox_userns_;
  UniqueFd sandbox_mntns_;  // and its mount namespace: its last reference, given to the janitor at shutdown()
  UniqueFd sandbox_root_;   // and init's root (O_PATH), until the broker has found its own tmpfs beneath it
  pid_t init_pid_ = -1;
  int landlock_abi_ = 0;
  LayerFacts layer_facts_;  // the machine's layers when the sandbox started (policy/guarantees.h)
  // TLS termination (issue 16): the CA and credentials made before init got the spec, handed to the relay.
  std::optional<HttpsSetup> https_;
  std::vector<GuaranteeState> guarantees_;  // assessed once, from spec_ and layer_facts_
  bool root_caller_ = false;  // runtime/inside/userns.h
  std::vector<std::string> degradations_;
  std::vector<std::string> layers_missing_;  // Landlock rules the ABI in use lacks (guarantees still held)
  std::vector<std::string> protected_reported_;
  std::unique_ptr<RepoGuard> repo_guard_;  // the writable binds, from before the sandbox could write
  std::mutex integrity_mutex_;             // one host-integrity check at a time
  std::once_flag snapshot_once_;
  std::optional<int64_t> snapshot_at_ms_;  // CLOCK_MONOTONIC ms; with mutex_
  MonitorClient* monitor_client_ = nullptr;  // with mutex_
  std::optional<SentSpawn> first_process_;

  UniqueFd wake_;         // eventfd: stop the monitor thread
  UniqueFd exits_ready_;  // eventfd: readable while exits_ is not empty
  UniqueFd signals_;      // signalfd of SandboxOptions::forward_signals, from the start of launch()
  // Forwarded signals read before the first process was live (with mutex_); sent to it as soon as it is.
  std::vector<int> held_signals_;
  bool first_process_live_ = false;  // the first process was reported spawned (with mutex_)
  uint64_t first_process_id_ = 0;
  bool monitor_on_caller_ = false;
  bool notifier_ok_ = false;
  bool relay_serving_ = false;  // the relay's thread runs (after the first connection)
  bool broker_started_ = false;
  bool notifications_on_relay_ = false;  // the relay's thread reads the seccomp listener, not the monitor
  std::thread monitor_thread_;
  std::mutex send_mutex_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  bool init_gone_ = false;
  bool shut_down_ = false;
  uint64_t next_id_ = 1;
  std::map<uint64_t, SpawnReply> pending_spawns_;
  std::map<uint64_t, Process> live_;
  std::deque<ExitInfo> exits_;
};

// "30s", "1.5s", "250ms"
std::string format_duration_ms(uint64_t ms);

}  // namespace oishell
