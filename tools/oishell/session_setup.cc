#include "tools/oishell/session_setup.h"

#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <chrono>

#include "base/data_dir.h"
#include "runtime/executors/language.h"

namespace oishell::cli {
namespace {

std::string real_path(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : std::string();
}

// A directory bound read-only into the sandbox at the same path, readable and executable by Landlock (SandboxSpec
// is plain data: the session adds it before the sandbox is built).
void bind_read_exec(SandboxSpec& spec, const std::string& dir) {
  spec.mounts.push_back(MountStep{MountStep::Kind::bind_ro, dir, dir, false});
  spec.landlock.paths.push_back(LandlockPathRule{dir, FsAccess::read_exec});
}

}  // namespace

SessionSetup prepare_session(SandboxSpec spec, bool confined, std::vector<std::string> prestart) {
  SessionSetup setup;
  // wall_time limits each block (enforced by the executors), not the life of the persistent executors.
  setup.block_wall_ms = spec.limits.wall_time_ms.value_or(0);
  spec.limits.wall_time_ms.reset();
  const std::string drivers_rel = data_path("runtime/executors/drivers");
  const std::string resolved = real_path(drivers_rel);
  const std::string drivers = resolved.empty() ? drivers_rel : resolved;
  if (confined) bind_read_exec(spec, drivers);
  setup.options.confined = confined;
  setup.options.drivers_inside = drivers;
  setup.options.drivers_host = drivers;
  setup.options.prestart = std::move(prestart);
  if (setup.block_wall_ms) setup.options.executor.wall_time = std::chrono::milliseconds(setup.block_wall_ms);
  setup.spec = std::move(spec);
  if (confined) {  // a block that failed on a path the sandbox hides, leaves out or keeps read-only is told so
    setup.denials = std::make_unique<executors::DenialExplainer>(setup.spec);
    setup.options.executor.denials = setup.denials.get();
  }
  return setup;
}

Result<std::string> add_fs_helper(SandboxSpec& spec) {
  const std::string dir = self_exe_dir();
  std::string helper;
  for (const std::string& candidate : {dir + "/oishell_fs/oishell-fs", dir + "/../lib/oishell/oishell-fs"}) {
    const std::string real = real_path(candidate);
    if (!real.empty() && ::access(real.c_str(), X_OK) == 0) {
      helper = real;
      break;
    }
  }
  if (helper.empty()) {
    return Status::error("the file helper oishell-fs is not installed beside " + dir +
                         " (oishell_fs/oishell-fs or ../lib/oishell/oishell-fs)");
  }
  // Seen inside already (under /usr, bound read-only with the system) when the mount plan maps it to itself.
  if (executors::host_path_of(helper, spec.mounts) != helper) bind_read_exec(spec, helper.substr(0, helper.rfind('/')));
  return helper;
}

}  // namespace oishell::cli
