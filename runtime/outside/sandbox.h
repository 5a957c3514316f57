#pragma once
// Sandbox: one confined session. create() clones sandbox init into new user, mount, pid, ipc, uts, net and cgroup
// namespaces; init builds the mount tree, brings up `lo`, opens the relay listeners and hands them (and the seccomp
// notify fd) up, seals itself (DESIGN.md, "Sealing order") and then waits for spawn requests. Every process started
// with spawn() is a child of init, so it inherits the whole confinement. The supervisor side (this object) serves
// the relay, answers seccomp notifications, enforces wall time and limits and reports everything to the EventSink.
//
// Lifetimes: destroying the Sandbox kills init, and with it every sandboxed process (pid namespace). init has
// PDEATHSIG, so it dies with the supervisor process too.
#include <poll.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"
#include "runtime/outside/events.h"
#include "runtime/outside/init_process.h"
#include "runtime/outside/path_observer.h"
#include "runtime/inside/pty.h"
#include "runtime/relay/relay.h"

namespace oishell {

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] resolved with the sandbox's PATH when it has no '/'
  std::vector<std::pair<std::string, std::string>> extra_env;  // added to SandboxSpec::env
  std::string cwd;                // inside; empty = SandboxSpec::cwd
  // Stdio given to the process: the supervisor's fds as they are (e.g. a terminal), or new pipes.
  enum class Stdio { inherit, pipes };
  Stdio stdio = Stdio::pipes;
  // Extra fds the process gets at 3, 4, ... (e.g. an executor's control channel); the supervisor keeps its ends.
  std::vector<int> extra_fds;
  // A terminal of the sandbox's own (runtime/inside/pty.h) at the stdio fds it marks (the others as `stdio` says) and as
  // the process's controlling terminal; its master comes back in Spawned::terminal.
  std::optional<TerminalRequest> terminal;
  // The sandbox ends with this process (a one-shot run): init exits the moment it has reported the process's end,
  // taking whatever is left inside with it, instead of waiting for shutdown()'s kill. The exit reaches the caller
  // as usual; the sandbox can start nothing after it.
  bool ends_sandbox = false;
};

struct Spawned {
  uint64_t id = 0;           // the sandbox's handle for this process
  UniqueFd stdin_fd;         // write end (pipes mode)
  UniqueFd stdout_fd;        // read end (pipes mode)
  UniqueFd stderr_fd;        // read end (pipes mode)
  UniqueFd terminal;         // the master of the process's terminal (SpawnRequest::terminal)
};

struct ExitInfo {
  uint64_t id = 0;
  int exit_code = -1;      // when exited normally
  int signal = 0;          // when killed by a signal
  std::string reason;      // "", "wall time limit 30s", "memory limit 2 GiB", ...
  // The conventional shell status: exit_code, or 128 + signal.
  int shell_status() const { return signal ? 128 + signal : exit_code; }
};

struct SandboxOptions {
  relay::AskHandler ask;  // network `ask` questions; null = deny unlisted
  // Init cloned ahead (InitProcess::clone(), e.g. before the policy was compiled); empty: create() clones it.
  InitProcess init;
  // Started as soon as init is sealed (no round trip after create()); its result comes from first_process().
  std::optional<SpawnRequest> first_process;
  // No monitor thread: wait() and first_process() serve init's reports, seccomp notifications, wall-time deadlines,
  // forwarded signals and the relay's start while they block. For a caller that is always blocked in one of them
  // while the sandbox runs (`oishell run`); at other times nothing is served (a reported syscall waits).
  bool monitor_on_caller = false;
  // Sent to the first process's group when this process receives them. The caller blocks them in every thread
  // before create() (the monitor reads them from a signalfd).
  std::vector<int> forward_signals;
};

// Descriptors the sandbox's monitor serves besides its own, on the thread that runs it (`oishell run`'s terminal
// relay: with SandboxOptions::monitor_on_caller, the thread that waits for the command; no thread of its own).
class MonitorClient {
 public:
  virtual ~MonitorClient() = default;
  // Appends the descriptors to watch now (none while it has nothing to do).
  virtual void add_pollfds(std::vector<pollfd>& fds) = 0;
  // What add_pollfds() appended, in the same order, with their revents.
  virtual void on_pollfds(const pollfd* fds, size_t count) = 0;
};

struct ResourcePeaks {
  std::optional<uint64_t> memory_bytes;  // memory.max_usage_in_bytes (v1) or memory.peak (v2)
  std::optional<uint64_t> processes;     // pids.peak, where the kernel keeps it
};

class Sandbox {
 public:
  // Builds and seals the sandbox. Fails closed: anything the spec requires that cannot be enforced is an error
  // naming the step ("landlock: kernel ABI 3 < required 4 for ..."); best-effort degradations are reported as
  // events and returned by degradations().
  static Result<std::unique_ptr<Sandbox>> create(const SandboxSpec& spec, EventSink& events,
                                                 SandboxOptions options = {});
  virtual ~Sandbox() = default;

  // Starts a process inside; it is the leader of its own process group.
  virtual Result<Spawned> spawn(const SpawnRequest& request) = 0;
  // The result of SandboxOptions::first_process (once; an error when none was requested).
  virtual Result<Spawned> first_process() = 0;
  // Sends `sig` to the process group of a spawned process (its children included).
  virtual Status signal(uint64_t id, int sig) = 0;
  // Readable when an exit (or a sandbox-level failure) is pending; then call next_exit().
  virtual int wait_fd() const = 0;
  // Non-blocking: the next process that ended, if any.
  virtual std::optional<ExitInfo> next_exit() = 0;
  // Blocks until process `id` ends (other exits are kept for next_exit()).
  virtual Result<ExitInfo> wait(uint64_t id) = 0;
  // Answer a network ask.
  virtual void answer_ask(uint64_t ask_id, relay::AskAnswer answer) = 0;
  // The network policy of the running sandbox replaced (relay::Relay::update_network; policy/live_network.h checks
  // that `network` may replace the running one). From any thread; returns once in force. An error when nothing
  // decides this sandbox's network (no sandbox at all).
  virtual Result<relay::NetworkUpdate> update_network(const NetworkSpec& network) {
    (void)network;
    return Status::error("this session has no sandbox: nothing decides its network, so there is no policy to change");
  }
  // What was enforced and what degraded, as sentences; also sent in the "start" event.
  virtual const std::vector<std::string>& degradations() const = 0;
  // Serves `client` in the monitor from the next wait on (null: no more); it must outlive that.
  virtual void set_monitor_client(MonitorClient* client) { (void)client; }
  // Makes the monitor ask its client for its descriptors again.
  virtual void wake_monitor() {}
  // Between two code blocks (an executor's block ended): what the host runs later and the sandbox changed so far —
  // protected paths (`protected_changed`) and git repositories, neutralised (`repo_neutralised`) — is reported now,
  // before the block's `done`, so the user and the model learn it with the block that did it. Nothing by default.
  virtual void check_host_integrity() {}
  // `oishell learn` (SeccompSpec::observe_paths): the paths the sandbox's processes named so far. Empty otherwise.
  virtual std::vector<PathObservation> observed_paths() const { return {}; }
  // The most memory and processes the sandbox held at once, where its cgroups tell (read before shutdown()).
  virtual ResourcePeaks resource_peaks() const { return {}; }
  // Kills every process inside and tears down; reports protected paths that changed and neutralises git
  // repositories planted during the run (runtime/outside/repo_guard.h). Idempotent.
  virtual void shutdown() = 0;
};

}  // namespace oishell
