#pragma once
// What `oishell supervise` tells its client about the sandbox in the `ready` event's `policy` (docs/protocol.md):
// the workspace, the network and its rules, the limits. The client (`interpreter`) shows it to the user (`%policy`)
// and to the model (the system prompt). It names credentials and where they appear inside, never a secret, never a
// placeholder (the spec holds neither: the supervisor makes them after compiling). Pure.
#include <cstdint>

#include <nlohmann/json.hpp>

#include "policy/sandbox_spec.h"

namespace oishell {

// {workspace, workspace_read_only, cwd, network, network_allow, network_rules, network_unlisted, limits}.
// `network_allow` is each allow rule's text, as before; `network_rules` the same rules in the same order as
// objects: {rule, protocol ("tcp"|"udp"), tls ("passthrough"|"terminate"), and, only when the rule has them,
// methods, paths, credentials: [{name, env, header, scheme}]} (`scheme` only when set).
// `block_wall_ms` is the limit on each block (0: none).
[[nodiscard]] nlohmann::json policy_summary(const SandboxSpec& spec, uint64_t block_wall_ms);

}  // namespace oishell
