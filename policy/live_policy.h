#pragma once
// The policy of a running session, kept so that its network section can be changed live (issue 38): the policy
// file read again (`oishell run --watch-policy`), a whole new network section (the supervisor protocol's `policy`
// request), or a patch of it (`%policy allow HOST[:PORT]`, `%policy deny ...`). Each proposal is compiled whole,
// with the session's command-line flags and host facts, and checked by live_network_change() against the spec the
// sandbox was started from: nothing is in force until the sandbox took it and commit() was called.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "policy/compile.h"
#include "policy/live_network.h"
#include "policy/policy.h"

namespace oishell::policy {

// A change of some rules, in the policy's own forms: each entry a string ("example.com:443") or an object
// ({host:, ports:, protocol:, ...}) as under network.allow / network.deny.
struct NetworkPatch {
  nlohmann::json allow = nlohmann::json::array();  // added to network.allow; the same text leaves network.deny
  nlohmann::json deny = nlohmann::json::array();   // added to network.deny; the same text leaves network.allow
  std::vector<std::string> remove;                 // rule texts removed from either list
  std::optional<std::string> on_unlisted;          // "deny" | "ask"
};

class LivePolicy {
 public:
  // Loads and compiles the session's policy, as compile_policy() does.
  static Result<LivePolicy> load(PolicySource source, PolicyOverrides overrides, CompileContext context);

  // The spec the sandbox is started from (and every proposal is checked against).
  const SandboxSpec& started() const { return started_; }
  // The network in force (the started one until a change is committed).
  const NetworkSpec& current() const { return current_spec_; }
  // The policy in force (the flags applied) and what it was compiled with: to explain a path (path_verdict.h).
  const Policy& policy() const { return current_; }
  const CompileContext& context() const { return context_; }
  // The file the policy was read from ("" for a built-in profile).
  const std::string& file() const { return source_.file; }

  // The policy file (and what it extends) read again.
  Result<LiveNetworkChange> propose_reload();
  // `section`: a whole `network:` mapping, replacing the one in force (the command-line flags still apply).
  Result<LiveNetworkChange> propose_network(const nlohmann::json& section);
  Result<LiveNetworkChange> propose_patch(const NetworkPatch& patch);
  // The last proposal is in force (the sandbox took its network).
  void commit();

 private:
  LivePolicy() = default;
  // Compiles `network` in place of the one in force; `label` names the proposal in messages.
  Result<LiveNetworkChange> propose(Policy proposed);

  PolicySource source_;
  PolicyOverrides overrides_;
  CompileContext context_;
  Policy loaded_;               // as loaded from the source, before the flags
  Policy current_;              // in force: loaded_ (or the last committed proposal) with the flags applied
  SandboxSpec started_;
  NetworkSpec current_spec_;
  std::optional<Policy> pending_;
  std::optional<NetworkSpec> pending_spec_;
};

}  // namespace oishell::policy
