#pragma once
// Which part of a compiled policy decides what a sandbox may do with one path, in words a person and a model can
// act on: "hidden by the policy (filesystem.hide)", "read-only (filesystem.read_only)", "not in the sandbox's
// view". Read off the mount plan the sandbox is built from (Landlock's rules follow the same plan:
// policy/mount_plan.h), so the answer is the sandbox's, not a guess from the policy text.
//   oishell explain --path P [--write]            (tools/oishell/cmd_explain.cc)
//   the `fs.denied` event after a block failed on P (runtime/executors/denial_scan.h)
#include <string>

#include "policy/compile.h"
#include "policy/policy.h"
#include "policy/sandbox_spec.h"

namespace oishell::policy {

enum class PathAccess { read, write };

struct PathVerdict {
  enum class Decision {
    allowed,      // the access is granted (what failed was not the sandbox's doing)
    hidden,       // filesystem.hide: made absent inside
    read_only,    // bound read-only (a write is refused with EROFS)
    protected_,   // filesystem.protect, the git metadata or the home's dotfiles: read-only inside a writable bind
    outside,      // not in the sandbox's view at all: nothing is bound there (ENOENT)
    scratch,      // the sandbox's own tmpfs (/tmp, the home): writable, but the host's files there are not seen
    sandbox_own,  // the sandbox's own /proc, /dev or generated file
  };
  Decision decision = Decision::outside;
  bool denied = false;  // the sandbox refuses `access` to this path (or hides what the host has there)
  std::string path;     // normalised, absolute
  std::string rule;     // the policy's part that decides: "filesystem.hide", "filesystem.read_only", ...
  std::string why;      // "is hidden by the policy (filesystem.hide)": follows the path in a sentence
  std::string allow;    // what would allow it ("" when nothing in a policy can, or when allowed)
};

// `path` is the sandbox's view of a path (absolute; relative paths resolve against spec.cwd).
PathVerdict path_verdict(const SandboxSpec& spec, const std::string& path, PathAccess access);

// Whether a denied `verdict` is over a path the policy hides where the mount plan left nothing to hide (the compiler
// drops a hide step nothing showed: ~/.ssh under an empty home); if so `verdict` says so. Pure: nothing on the host
// is looked at, so it may explain a path the sandbox chose (the fs.denied event).
bool hidden_by_policy(const Policy& policy, const CompileContext& context, const SandboxSpec& spec,
                      PathVerdict* verdict);

// path_verdict with its advice tried (this compiles the grant, which looks at the host: for the user's own
// questions, `oishell explain --path`): the grant it suggests is compiled into `policy` (the one `spec` came from).
// A path the policy hides where nothing showed it (the compiler drops such a hide step) comes out hidden, and a grant
// the compiler refuses, or one that would still not reach the path, is no advice.
PathVerdict explain_path(const Policy& policy, const CompileContext& context, const SandboxSpec& spec,
                         const std::string& path, PathAccess access);

// "/home/u/.ssh is hidden by the policy (filesystem.hide); nothing in a policy of yours can show it".
std::string describe(const PathVerdict& verdict);

// The deepest mount step whose target is `path` or an ancestor (a later step wins at the same depth; a hide step
// anywhere over it wins outright); nullptr when nothing is mounted there. Symlink steps are not coverage.
const MountStep* deciding_step(const SandboxSpec& spec, const std::string& path);

}  // namespace oishell::policy
