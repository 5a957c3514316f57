#pragma once
// The pure half of `oishell learn`: what a learning run touched (observed elsewhere) turned into the least policy
// that grants it on top of a base, as YAML text with a comment on every entry saying which program used it and how
// often. No sandbox, no I/O except host facts through HostFs. Widening a file this function wrote earlier
// (`learn --policy FILE`) inserts new entries and keeps every existing line byte for byte.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/compile.h"
#include "policy/host_fs.h"
#include "policy/net_rules.h"
#include "policy/policy.h"
#include "policy/sandbox_spec.h"

namespace oishell::policy {

// One host path the run touched (absolute, as resolved on the host).
struct LearnedPath {
  enum class Mode { read, exec, write };  // write = opened for writing, created, removed, renamed, mkdir...
  std::string path;
  Mode mode = Mode::read;
  std::string program;  // short program name that did it, e.g. "python3"
  uint64_t count = 1;
};

// A network destination the run connected to and was let through.
struct LearnedDestination {
  std::string host;  // a name (or IP literal)
  uint16_t port = 0;
  HostRule::Protocol protocol = HostRule::Protocol::tcp;
  std::string program;
  uint64_t count = 1;
};

// A system call the base denies and the run used.
struct LearnedSyscall {
  std::string name;
  std::string program;
  uint64_t count = 1;
};

struct LearnRun {
  std::string extends;               // the `extends:` value of the output: a profile name or a path
  std::vector<std::string> command;  // for the header comment
  std::vector<LearnedPath> paths;
  std::vector<LearnedDestination> destinations;
  std::vector<LearnedSyscall> syscalls;
  std::optional<uint64_t> peak_memory_bytes;  // nullopt: not measured
  std::optional<uint64_t> peak_processes;
  int exit_status = 0;  // the command's; non-zero = the run failed (the header says so)
};

struct LearnResult {
  std::string text;                             // the policy file (YAML with comments)
  std::vector<std::string> wanted_not_granted;  // "PATH (hidden by the base)", ...; also as comments in `text`
  std::vector<std::string> added;               // one line per entry added (for the CLI's summary)
  std::vector<std::string> read_only_paths;     // the filesystem grants added, as host paths
  std::vector<std::string> read_write_paths;
};

// What the base policy says that its compiled spec does not keep. A hidden path under the tmpfs home has no hide
// step (the tmpfs already hides it), yet compile drops any grant below it; the host's home is not in the spec when
// the home is the workspace.
struct BaseFacts {
  std::vector<std::string> hidden;  // every `filesystem.hide` entry as host paths, lexical and resolved
  std::string real_home;            // the host's home directory, resolved; "" when there is none
};

// The facts of `base` (the policy `spec` was compiled from) on the host of `context`, as compile() derives them.
BaseFacts base_facts(const Policy& base, const CompileContext& context, const SandboxSpec& spec);

// The policy text for `run` on top of `base` (compiled): what the base already grants is not repeated, what it
// hides (or what may never be writable: `/`, system directories, the home and its ancestors) is reported in
// wanted_not_granted instead. `existing`: the text of a file this function wrote earlier, widened by inserting the
// new entries only; an error when it is not in the layout this function writes.
[[nodiscard]] Result<LearnResult> write_learned_policy(const LearnRun& run, const SandboxSpec& base,
                                                       const BaseFacts& facts, const HostFs& host,
                                                       const std::optional<std::string>& existing);

}  // namespace oishell::policy
