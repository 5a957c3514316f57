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

// Fills spec.mounts, spec.protected_paths and spec.landlock.paths. Errors name the policy line.
Status plan_filesystem(const FsPlanInput& in, SandboxSpec& spec, std::vector<Diagnostic>& errors);

// Proxy mode: /etc/resolv.conf inside names the sandbox's DNS stub (127.0.0.1), whatever the host's is: a `file`
// step over it (over the link itself when it is a symlink, e.g. into /run, which is not inside); optional, since a
// host without one leaves resolvers at their default, 127.0.0.1:53, the stub. Appended after every other step,
// so no bind of the policy's covers it.
MountStep resolv_conf_step(const NetworkSpec& network);

}  // namespace oishell::policy
