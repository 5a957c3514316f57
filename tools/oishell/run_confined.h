#pragma once
// The body of `oishell run` (one command confined, its terminal relayed, its signals forwarded), shared with
// `oishell learn`, which adjusts the compiled spec and reads what the sandbox saw before it is torn down.
#include <functional>
#include <string>
#include <vector>

#include "policy/compile.h"
#include "runtime/outside/events.h"
#include "runtime/outside/sandbox.h"

namespace oishell::cli {

struct ConfinedCommand {
  PolicySource source;
  PolicyOverrides overrides;
  std::string events_file;
  int events_fd = -1;
  std::vector<std::string> command;
  // Called once the policy compiled, before the sandbox is built (learn: observe paths, open the network).
  std::function<void(SandboxSpec&)> adjust_spec;
  // Every event, besides the --events destination (learn: the destinations and denials of the run).
  EventSink* also_events = nullptr;
  // After the command ended (exit_status: what `run` returns for it), before the sandbox is torn down.
  std::function<void(Sandbox&, int exit_status)> before_shutdown;
  const char* verb = "run";  // in messages: "oishell run: ..."
  // --watch-policy: the policy file (source.file) re-read when it changes, and its network section applied live
  // (policy.changed; policy.rejected keeps the policy in force).
  bool watch_policy = false;
};

// Runs `c.command` confined; returns `oishell run`'s exit status (the command's, 128+N, 125, 126, 127).
int run_confined(const ConfinedCommand& c);

}  // namespace oishell::cli
