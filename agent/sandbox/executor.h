#pragma once
// Where code runs: the agent's view of a session of persistent language executors. The real one is
// SupervisorClient (agent/sandbox/executor_client.h), which speaks the JSON-lines protocol of `oishell supervise`
// (docs/protocol.md); tests substitute their own.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace oishell::agent {

// Something the run changed that the host acts on later, as the supervisor reports it (docs/events.md): a protected
// path that changed (`protected_changed`, on an `exit` event or on its own) or a git repository the supervisor
// neutralised so that the host's git cannot run what was planted in it (`repo_neutralised`). Every string is
// partly chosen by sandboxed code (file names): escape it before it is printed (feedback.h: describe_host_change).
struct HostChange {
  enum class Kind { protected_path, repository };
  Kind kind = Kind::protected_path;
  std::string path;    // protected_path: the item as reported, "PATH (what)"; repository: the path found
  std::string found;   // repository: what was found ("written during the run; sets core.fsmonitor")
  std::string action;  // repository: what the supervisor did about it
  bool between_blocks = false;  // reported while no block ran: attached to the next block's feedback
  bool operator==(const HostChange&) const = default;
};

// How the user answers a network `ask` from the sandbox.
enum class AskDecision { allow_once, allow_always, deny };
std::string_view ask_decision_name(AskDecision d);  // "allow_once", "allow_always", "deny"

// Receives what a running block produces.
class ExecObserver {
 public:
  virtual ~ExecObserver() = default;
  virtual void on_output(std::string_view stream, std::string_view data) = 0;  // stream: "stdout" | "stderr"
  virtual void on_active_line(int /*line*/) {}
  virtual void on_image(const std::string& /*format*/, const std::string& /*base64*/) {}
  // denied, limit, executor_restarted: shown to the user (they also end up in ExecResult).
  virtual void on_notice(const nlohmann::json& /*event*/) {}
  // A protected path changed or a repository was neutralised (also in ExecResult::host_changes). A protected item
  // is reported once per sandbox, however often the supervisor repeats it.
  virtual void on_host_change(const HostChange& /*change*/) {}
  // A connection wants a destination the policy leaves to the user.
  virtual AskDecision on_ask(const nlohmann::json& ask) = 0;
};

struct ExecResult {
  std::string status = "ok";   // ok | error | interrupted | killed | timeout
  int exit_code = 0;
  int64_t duration_ms = 0;
  std::vector<nlohmann::json> denials;   // `denied` events during the block
  std::vector<nlohmann::json> limits;    // `limit` events
  std::vector<nlohmann::json> restarts;  // `executor_restarted` events
  std::vector<nlohmann::json> asks_denied;  // network asks answered `deny` (the model is told)
  std::vector<HostChange> host_changes;  // what the block (or, between_blocks, the time before it) left the host
  unsigned user_interrupts = 0;          // Ctrl-C presses while the block ran
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Brings the sandbox up (idempotent); the first exec() calls it too.
  virtual Status start() = 0;
  // Begins bringing the sandbox up without waiting for it (start() waits); errors surface in start().
  virtual void prestart() {}
  // Runs one block. Ctrl-C (agent/host/interrupt.h) while it runs sends `interrupt`.
  virtual Result<ExecResult> exec(const std::string& language, const std::string& code, ExecObserver& observer) = 0;
  virtual Status reset(const std::string& language) = 0;
  // Reads, without waiting, what the sandbox reported while no block ran (an executor that died, a background job's
  // denials): each goes to `observer` now and is attached to the next exec()'s result. Does not start the sandbox.
  virtual void poll(ExecObserver& /*observer*/) {}
  // Canonical names of the languages the sandbox can run (after start()).
  virtual std::vector<std::string> languages() const = 0;
  // What the sandbox allows, in a few lines for the model and for %policy ("" when unknown).
  virtual std::string policy_summary() const = 0;
  // One line: "openshell sandbox, policy default" / "no sandbox (code runs on this host)".
  virtual std::string description() const = 0;
  virtual void shutdown() = 0;
  // shutdown(), and what the sandbox reports while it shuts down (host changes found at the end, the executors'
  // exits) goes to `observer`; network asks then are denied without asking.
  virtual void finish(ExecObserver& /*observer*/) { shutdown(); }
  // Changes the running sandbox's network policy without a restart (the supervisor protocol's `policy` request,
  // docs/protocol.md; `request` without its `op`): the answer, `policy.changed` (what it widened and narrowed, the
  // connections it closed) or `policy.rejected` (why; nothing changed). What the sandbox reports meanwhile goes to
  // `observer` and to the next block's result.
  virtual Result<nlohmann::json> change_policy(const nlohmann::json& /*request*/, ExecObserver& /*observer*/) {
    return Status::error("this sandbox cannot change its policy while it runs");
  }
};

}  // namespace oishell::agent
