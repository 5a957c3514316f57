#pragma once
// Where code runs: the agent's view of a session of persistent language executors. The real one is
// SupervisorClient (agent/executor_client.h), which speaks the JSON-lines protocol of `oishell supervise`
// (docs/protocol.md); tests substitute their own.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace oishell::agent {

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
  unsigned user_interrupts = 0;          // Ctrl-C presses while the block ran
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Brings the sandbox up (idempotent); the first exec() calls it too.
  virtual Status start() = 0;
  // Begins bringing the sandbox up without waiting for it (start() waits); errors surface in start().
  virtual void prestart() {}
  // Runs one block. Ctrl-C (agent/interrupt.h) while it runs sends `interrupt`.
  virtual Result<ExecResult> exec(const std::string& language, const std::string& code, ExecObserver& observer) = 0;
  virtual Status reset(const std::string& language) = 0;
  // Canonical names of the languages the sandbox can run (after start()).
  virtual std::vector<std::string> languages() const = 0;
  // What the sandbox allows, in a few lines for the model and for %policy ("" when unknown).
  virtual std::string policy_summary() const = 0;
  // One line: "openshell sandbox, policy default" / "no sandbox (code runs on this host)".
  virtual std::string description() const = 0;
  virtual void shutdown() = 0;
};

}  // namespace oishell::agent
