#pragma once
// The filesystem half of compile(): mount plan, hide and protect steps, and the Landlock rules that mirror them.
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/host_fs.h"
#include "policy/paths.h"
#include "policy/policy.h"

namespace oishell::policy {

struct FsPlanInput {
  const FilesystemPolicy* fs = nullptr;
  const HostFs* host = nullptr;
  PathVars vars;            // workspace already resolved
  std::string home_path;    // $HOME inside
  HomeMode home = HomeMode::tmpfs;
  bool workspace_read_only = false;
  std::string real_home;    // the host's home directory, resolved; empty when it does not exist
  bool allow_home = false;  // filesystem.allow_home_workspace
  GitMode git = GitMode::read_only;
};

// Why `dir` (resolved, absolute) may not be bound writable, or "" when it may: `/`, a system directory, the root of
// a directory shared with others (/home, /tmp, ...), or — unless `allow_home` — the home directory `real_home` or
// one of its ancestors.
std::string writable_refusal(const std::string& dir, const std::string& real_home, bool allow_home);

// What in a git directory git executes or obeys: read-only inside in `commit` mode (the rest stays writable).
const std::vector<std::string>& git_obeyed_entries();

// For a root caller, whether step `index` of spec.mounts is id-mapped with the sandbox's user namespace (the
// supervisor's trees: runtime/outside/idmapped_binds.h), so that inside it belongs to the sandbox's root:
//  - a bind_rw that is not a system directory (the workspace, read_write paths, what they hold that is bound over
//    itself): the sandbox writes there as the caller;
//  - a bind_ro whose source is, or lies beneath, the source of such a bind_rw (a read_only path inside the
//    workspace): it shows files that the writable bind already makes the sandbox's own, and shows them read-only.
// Never any other bind_ro (a read_only path elsewhere, a read-only workspace, a system directory): mapped, the
// root-only files beneath it would become the sandbox's root's (issue 33: a policy listing /etc under read_only
// made /etc/ssl/private and /etc/sudoers readable). Protect steps are clones made inside, of what the tree they
// lie in shows. Pure, so that `explain` says what the supervisor does.
bool id_mapped_for_root_caller(const SandboxSpec& spec, size_t index);

// The targets of the read-only binds, besides the system directories, that a root caller's sandbox does not id-map:
// root-only files beneath them stay unreadable inside (`explain` and, for a root caller, `validate` name them).
std::vector<std::string> unmapped_read_only_targets(const SandboxSpec& spec);

// The sentence that says so, or "" when there are none.
std::string describe_unmapped_read_only(const SandboxSpec& spec);

// Fills spec.mounts, spec.protected_paths and spec.landlock.paths. Errors name the policy line.
Status plan_filesystem(const FsPlanInput& in, SandboxSpec& spec, std::vector<Diagnostic>& errors);

// Proxy mode: /etc/resolv.conf inside names the sandbox's DNS stub (127.0.0.1), whatever the host's is: a `file`
// step over it (over the link itself when it is a symlink, e.g. into /run, which is not inside); optional, since a
// host without one leaves resolvers at their default, 127.0.0.1:53, the stub. Appended after every other step,
// so no bind of the policy's covers it.
MountStep resolv_conf_step(const NetworkSpec& network);

}  // namespace oishell::policy
