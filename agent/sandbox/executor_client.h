#pragma once
// SupervisorClient: the Executor that runs `oishell supervise` as a child and speaks its JSON-lines protocol
// (docs/protocol.md) over the child's stdin/stdout. Requests: exec, interrupt, input, reset, answer, shutdown.
// Events: ready, output, active_line, image, done, denied (and net.denied), ask (net.ask), limit,
// executor_restarted, error, and what the run left the host: exit.protected_changed, protected_changed,
// repo_neutralised (each protected item is passed on once: `exit` events repeat everything since the start).
//
// The child gets the agent's environment minus the model's API key (the key's variable and any variable holding
// the key), runs in its own process group (a terminal's Ctrl-C reaches the agent, which sends `interrupt`), and dies
// with the agent (PR_SET_PDEATHSIG). The supervisor's stderr is collected and shown when it fails.
#include <sys/types.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/sandbox/executor.h"
#include "base/unique_fd.h"

namespace oishell::agent {

struct SupervisorOptions {
  std::string oishell_path;           // empty: find_oishell()
  std::string sandbox = "openshell";  // openshell | none
  std::string policy;                 // a policy file, or a built-in profile name; empty: the default profile
  // Set when `policy` is a file the agent wrote (a profile's `policy:` mapping): description()'s words for it ("the
  // policy in profile X"); a failure that names the file shows its text. Empty: "policy " + `policy`.
  std::string policy_label;
  std::vector<std::string> secret_variables;  // environment variables never passed on
  std::vector<std::string> secret_values;     // values never passed on (in any variable)
  std::vector<std::string> hidden_paths;      // host paths never visible inside, whatever the policy (--hide)
  int ready_timeout_ms = 60000;
  std::vector<std::string> extra_flags;       // policy flags added for the session (%policy learn)
  std::string display;                        // "WxH": a virtual display inside (--os); empty: none
  // A fresh workspace made for the session (agent/sandbox/session_workspace.h), passed as --workspace and named in
  // description(); empty: the working directory.
  std::string workspace;
  // --kubernetes: the supervisor runs in a pod, reached through `oishell-kube session` (deploy/kubernetes/).
  std::optional<std::string> kubernetes;
};

// The `oishell` binary: $OISHELL_BIN; next to this executable (installed layout); ../oishell (build tree:
// build/tools/interpreter/interpreter beside build/tools/oishell); else `oishell` on PATH.
std::string find_oishell();
// `oishell-kube`: $OISHELL_KUBE_BIN, next to this executable, else on PATH.
std::string find_oishell_kube();

class SupervisorClient final : public Executor {
 public:
  explicit SupervisorClient(SupervisorOptions options) : options_(std::move(options)) {}
  ~SupervisorClient() override { shutdown(); }

  Status start() override;
  void prestart() override;
  Result<ExecResult> exec(const std::string& language, const std::string& code, ExecObserver& observer) override;
  Status reset(const std::string& language) override;
  void poll(ExecObserver& observer) override;
  std::vector<std::string> languages() const override { return languages_; }
  std::string policy_summary() const override { return policy_summary_; }
  Result<nlohmann::json> change_policy(const nlohmann::json& request, ExecObserver& observer) override;
  std::string description() const override;
  void shutdown() override;
  void finish(ExecObserver& observer) override;

  // The argv used to start the supervisor (for --verbose and tests).
  std::vector<std::string> command_line() const;

 private:
  Status spawn();
  Status send(const nlohmann::json& request);
  // Waits up to timeout_ms (-1: forever) for the next event; nullopt-like empty json on timeout.
  // `interrupt_fd` (>= 0) wakes the wait: *woken is set.
  Result<nlohmann::json> next_event(int timeout_ms, int interrupt_fd = -1, bool* woken = nullptr);
  // The next complete line already read (an error event for one that is not a JSON object); nullopt when none.
  std::optional<nlohmann::json> take_line();
  // Reads what the supervisor has written, waiting at most timeout_ms; false at end of file, on an error or when
  // nothing came. Never reports the supervisor dead: the next wait in exec() or start() does.
  bool read_some(int timeout_ms);
  enum class Effect { none, block_done, block_refused };
  // One event, while the block `block_id` runs ("" when none does): shown through `observer`, recorded in
  // `result`. An error only when an answer to an `ask` could not be sent.
  Result<Effect> handle_event(const nlohmann::json& event, const std::string& block_id, ExecObserver& observer,
                              ExecResult* result);
  // What is still in the pipe right after a block's `done` (the supervisor's reports that follow it), for at most
  // a few milliseconds.
  void drain_after_done(const std::string& block_id, ExecObserver& observer, ExecResult* result);
  // Reports collected outside a block (or by a block that failed) wait here for the next block's result.
  void keep_for_next_block(ExecResult&& reports);
  Status died(const std::string& while_doing);
  void drain_stderr();
  std::string load_policy_summary();

  SupervisorOptions options_;
  pid_t pid_ = -1;
  UniqueFd to_child_, from_child_, err_child_;
  std::string in_buf_, err_buf_;
  bool ready_ = false;
  std::vector<std::string> languages_;
  std::string policy_summary_;
  nlohmann::json ready_event_;
  // The policy changes in force (the `policy` requests answered policy.changed), in order: a sandbox started again
  // after its supervisor died is given them before anything runs in it, so that a host the user denied while the
  // session ran is not allowed again by the restart.
  std::vector<nlohmann::json> live_changes_;
  Status replay_live_changes();
  // Sends a `policy` request and waits (30 s) for its answer, policy.changed or policy.rejected. Other events go to
  // `observer` and `reports` (nullptr: dropped, as before anything runs).
  Result<nlohmann::json> send_policy(const nlohmann::json& request, ExecObserver* observer, ExecResult* reports);
  uint64_t next_id_ = 1;
  Status spawn_error_;
  std::set<std::string> protected_seen_;  // protected items passed on in this sandbox's life
  ExecResult pending_;                    // reports for the next block (keep_for_next_block)
};

}  // namespace oishell::agent
