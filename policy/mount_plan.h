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
};

// Fills spec.mounts, spec.protected_paths and spec.landlock.paths. Errors name the policy line.
Status plan_filesystem(const FsPlanInput& in, SandboxSpec& spec, std::vector<Diagnostic>& errors);

}  // namespace oishell::policy
