#pragma once
// The entry points from a policy (file or built-in profile) plus command-line overrides to a SandboxSpec.
// Implemented in policy/ (pure: the host facts come in through CompileContext).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"

namespace oishell {

class HostFs;  // policy/host_fs.h

// The host facts compilation depends on. from_process() reads them (cwd, $HOME, $TMPDIR, environ);
// tests build one by hand.
struct CompileContext {
  std::string cwd;
  std::string home;
  std::string tmpdir = "/tmp";
  std::map<std::string, std::string> host_env;  // for env.pass (tests fill it by hand)
  const char* const* process_env = nullptr;     // from_process(): environ, read only for the names env.pass lists
  const HostFs* fs = nullptr;  // existence, kinds and symlinks of host paths; null = the real filesystem
  // --sandbox none: nothing is bound or confined, the workspace is only the working directory, so no directory is
  // refused as one (the home, `/`: the code runs as the caller wherever it is started).
  bool unconfined = false;
  static CompileContext from_process();
  // `name`'s value in host_env, else in process_env; nullopt when neither has it.
  std::optional<std::string> env(const std::string& name) const;
};

// Where the policy comes from: a file path, or a built-in profile name; both empty means the `default` profile.
struct PolicySource {
  std::string file;
  std::string profile;
};

// `oishell run` flags. They add to the policy; they never weaken a `hide` or `deny`.
struct PolicyOverrides {
  std::optional<std::string> workspace;   // --workspace DIR
  std::vector<std::string> read_only;     // --ro PATH
  std::vector<std::string> read_write;    // --rw PATH
  std::vector<std::string> hide;          // --hide PATH (added to filesystem.hide)
  std::vector<std::string> unix_sockets;  // --unix PATH (added to network.unix)
  std::vector<std::string> allow_domains; // --allow-domain D
  std::vector<std::string> allow_udp;     // --allow-udp HOST:PORT
  std::optional<std::string> net_mode;    // --net none|proxy
  std::vector<std::string> env_set;       // --env K=V
  std::optional<std::string> wall_time;   // --timeout DUR ("30s", "10m")
  std::optional<std::string> memory;      // --memory SIZE ("512MiB")
  bool allow_home_workspace = false;      // --allow-home-workspace
};

// Load (resolving `extends`), validate, apply overrides, compile. A failure's message lists every validation
// error as "file:line:column: key.path: what is wrong (hint)", one per line.
Result<SandboxSpec> compile_policy(const PolicySource& source, const PolicyOverrides& overrides,
                                   const CompileContext& context);

}  // namespace oishell
