#pragma once
// What of a policy can change on a running sandbox (issue 38, "Live network policy"), as a pure function of the
// running sandbox's compiled spec and a proposed one compiled against the same host. Only the network section's
// decisions can: allow and deny rules, `hosts:`, UDP rules, HTTPS rules, `allow_all`, `allow_private`,
// `on_unlisted` and `network.unix`, because the supervisor decides every connection, datagram association and DNS
// answer when it happens. Everything else was fixed when the sandbox was sealed: its mounts and Landlock rules can
// only narrow a running process, never widen it, its seccomp filter cannot be lifted, its limits and environment
// belong to processes already running.
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"

namespace oishell::policy {

struct LiveNetworkChange {
  NetworkSpec network;                // the proposed network section, to be applied as a whole
  std::vector<std::string> widened;   // what it allows that the running one does not (diff_network's lines)
  std::vector<std::string> narrowed;  // what the running one allows that it no longer does
  bool same() const { return widened.empty() && narrowed.empty(); }
};

// Every reason `proposed` cannot replace `running` live, one sentence each (saying why, and what to do instead);
// empty when it can. `running` is the spec the sandbox was started from (as compiled, before the runtime added
// anything to it), `proposed` compiled by the same compile_policy() call with the same host facts.
std::vector<std::string> live_change_problems(const SandboxSpec& running, const SandboxSpec& proposed);

// The change from the network in force (`current`: the started one, or the last change applied) to `proposed`'s,
// or an error holding every problem against `started` (one per line), with nothing to apply.
Result<LiveNetworkChange> live_network_change(const SandboxSpec& started, const NetworkSpec& current,
                                              const SandboxSpec& proposed);

}  // namespace oishell::policy
