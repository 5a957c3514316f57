#pragma once
// What `oishell supervise` and `oishell mcp` do alike before their session starts: the policy's wall time moved
// from the sandbox's life to each block, the executors' drivers bound read-only into the sandbox, the session's
// options; and, for `oishell mcp`, its file helper (oishell-fs) made visible inside.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"
#include "runtime/executors/denial_explainer.h"
#include "runtime/executors/session.h"

namespace oishell::cli {

struct SessionSetup {
  SandboxSpec spec;
  uint64_t block_wall_ms = 0;  // the policy's wall_time: each block's (0: none)
  executors::SessionOptions options;
  // Confined: says which of a block's failures on a path the sandbox caused (fs.denied; options.executor.denials).
  std::unique_ptr<executors::DenialExplainer> denials;
};

// `confined` false: --sandbox none (nothing is bound; the drivers are used where they are).
SessionSetup prepare_session(SandboxSpec spec, bool confined, std::vector<std::string> prestart);

// oishell-fs (tools/oishell_fs/), found beside this binary (the build tree) or in <prefix>/lib/oishell; its
// directory is bound read-only into the sandbox unless the sandbox sees it already (a system directory). Returns
// its path inside the sandbox.
Result<std::string> add_fs_helper(SandboxSpec& spec);

}  // namespace oishell::cli
