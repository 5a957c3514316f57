#pragma once
// "Allow always" that outlives the session (issue 38): the network question's `always` answer kept as an allow rule
// in a policy file that later sessions use, after the user saw the diff and said yes; never silently, and never in a
// file outside the workspace or the user's oishell config directory.
//
// Where: the session's own policy file when it is one of those (and in the block layout this writes: a top-level
// `network:` with an `allow:` list), else the workspace policy `.oishell/policy.yaml`, made with `extends:` the
// policy in use (a profile name, or the file by its absolute path).
//
// Who may have written it: the workspace is writable inside the sandbox, so code there could plant or widen
// `.oishell/policy.yaml` for the next session. The agent therefore keeps a copy of every text it wrote there in its
// own state directory (hidden from the sandbox), and a later session uses the workspace policy only while its text
// is that copy, byte for byte (trusted_workspace_policy()).
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace oishell::agent {

struct KeepPlan {
  std::string path;                   // the file to write (absolute)
  std::optional<std::string> before;  // its text now; nullopt: it does not exist yet
  std::string after;                  // its text with the rule
  bool workspace_policy = false;      // `.oishell/policy.yaml` (its copy is recorded for trust)
  bool unchanged() const { return before && *before == after; }
};

struct KeepContext {
  std::string session_policy;  // what the session was started with: a file, a profile name, or "" (default)
  bool policy_from_profile = false;  // the policy is a profile's `policy:` mapping in a private file
  std::string workspace;       // absolute
  std::string config_dir;      // the user's oishell config directory ($XDG_CONFIG_HOME/oishell)
  std::string state_dir;       // the agent's state directory, where copies of workspace policies are kept
};

// The rule "HOST:PORT" added to the policy file it belongs in. An error (saying why, with the YAML to add by hand)
// when no file may take it: a policy file outside the workspace and the config directory, a profile's mapping,
// a file not in the layout this edits.
Result<KeepPlan> plan_keep(const KeepContext& context, const std::string& rule);

// Writes the plan (atomically; `.oishell/` made 0755 when missing) and, for the workspace policy, records the copy.
Status carry_out(const KeepContext& context, const KeepPlan& plan);

// The workspace policy to start a session with: `.oishell/policy.yaml` when it exists and is what the agent last
// wrote there; nullopt when there is none. An error (to show the user) when it exists and differs from what the
// agent wrote: then it is not used.
Result<std::optional<std::string>> trusted_workspace_policy(const KeepContext& context);

// A unified diff of `plan` for the user ("--- a/..." "+++ b/...").
std::string describe_plan(const KeepPlan& plan);

// The question that follows the diff (agent/core/run_block.cc); the page and ACP know it by this text and offer it as
// two buttons ("Write it", "Don't write"), the diff shown with it.
inline constexpr std::string_view kKeepQuestion = "Write it? [y/N] ";

}  // namespace oishell::agent
