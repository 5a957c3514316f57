// Path verdicts from the mount plan: see path_verdict.h.
#include "policy/path_verdict.h"

#include <algorithm>

#include "policy/compiler.h"
#include "policy/paths.h"

namespace oishell::policy {
namespace {

bool is_system(const std::string& path) {
  const auto& dirs = system_dirs();
  return std::any_of(dirs.begin(), dirs.end(), [&](const std::string& d) { return path_within(path, d); });
}

bool in_git_metadata(const std::string& path) {
  return path.find("/.git/") != std::string::npos || path.ends_with("/.git");
}

// A YAML flow line a person can paste into a policy that extends the one in use.
std::string grant(const char* key, const std::string& path) {
  return "`filesystem: {" + std::string(key) + ": [" + path + "]}` in a policy that extends this one (or `--" +
         (std::string(key) == "read_write" ? "rw" : "ro") + " " + path + "` for one run)";
}

}  // namespace

const MountStep* deciding_step(const SandboxSpec& spec, const std::string& path) {
  const MountStep* best = nullptr;
  for (const auto& m : spec.mounts) {
    if (m.kind == MountStep::Kind::symlink || !path_within(path, m.target)) continue;
    if (m.kind == MountStep::Kind::hide) return &m;
    if (!best || path_depth(m.target) >= path_depth(best->target)) best = &m;
  }
  return best;
}

PathVerdict path_verdict(const SandboxSpec& spec, const std::string& path, PathAccess access) {
  PathVerdict v;
  const std::string base = spec.cwd.empty() ? spec.workspace : spec.cwd;
  v.path = normalise_path(!path.empty() && path[0] == '/' ? path : base + "/" + path);
  const bool write = access == PathAccess::write;
  const MountStep* step = deciding_step(spec, v.path);
  using D = PathVerdict::Decision;
  if (!step) {
    v.decision = D::outside;
    v.denied = true;
    v.rule = "filesystem";
    v.why = "is not in the sandbox's view: the policy binds nothing there, so it does not exist inside";
    if (v.path == "/" || is_system(v.path)) {
      v.allow.clear();
    } else {
      v.allow = grant(write ? "read_write" : "read_only", v.path);
    }
    return v;
  }
  switch (step->kind) {
    case MountStep::Kind::hide:
      v.decision = D::hidden;
      v.denied = true;
      v.rule = "filesystem.hide";
      v.why = "is hidden by the policy (filesystem.hide: " + step->target + ")";
      v.allow = "nothing in a policy that extends this one shows it again: a hidden path stays hidden; drop it from "
                "the hide list of a policy of your own that does not extend this profile";
      return v;
    case MountStep::Kind::bind_ro:
    case MountStep::Kind::file:
      v.decision = D::read_only;
      v.denied = write;
      if (step->kind == MountStep::Kind::file) {
        v.rule = "the sandbox's own file";
        v.why = "is a read-only file the sandbox makes for itself";
      } else if (step->target == spec.workspace && spec.workspace_read_only) {
        v.rule = "filesystem.workspace_read_only";
        v.why = "is read-only: the workspace is read-only (filesystem.workspace_read_only)";
        v.allow = "`filesystem: {workspace_read_only: false}`";
      } else if (step->system) {
        v.rule = "filesystem (system directory)";
        v.why = "is read-only: system directories are never writable inside (" + step->target + ")";
      } else {
        v.rule = "filesystem.read_only";
        v.why = "is read-only (filesystem.read_only: " + step->target + ")";
        if (!is_system(v.path)) v.allow = grant("read_write", v.path);
      }
      if (!write) {
        v.why = "is readable (" + v.rule + ")";
        v.allow.clear();
      }
      return v;
    case MountStep::Kind::protect:
      v.decision = D::protected_;
      v.denied = write;
      if (in_git_metadata(v.path) || in_git_metadata(step->target)) {
        v.rule = "filesystem.git";
        v.why = "is read-only: the workspace's git metadata (filesystem.git: read_only; with `commit`, objects, "
                "refs and the index are writable, never config or hooks)";
        v.allow = "`filesystem: {git: commit}` (commits; config and hooks stay read-only)";
      } else if (!spec.home_exposed.empty() && path_within(step->target, spec.home_exposed)) {
        v.rule = "filesystem.allow_home_workspace";
        v.why = "is read-only: the home's dotfiles and ~/bin stay read-only while the home is writable";
      } else {
        v.rule = "filesystem.protect";
        v.why = "is read-only: a protected path (filesystem.protect: " + step->target + ")";
        v.allow = "drop it from filesystem.protect in a policy of your own";
      }
      if (!write) {
        v.why = "is readable (" + v.rule + ")";
        v.allow.clear();
      }
      return v;
    case MountStep::Kind::bind_rw:
      v.decision = D::allowed;
      v.rule = step->target == spec.workspace ? "filesystem.workspace" : "filesystem.read_write";
      v.why = "is writable (" + v.rule + ": " + step->target + ")";
      return v;
    case MountStep::Kind::tmpfs:
      v.decision = D::scratch;
      v.denied = !write && step->target != v.path;  // writes land in it; what the host has below it is not seen
      v.rule = step->target == spec.home_path ? "filesystem.home" : "filesystem";
      v.why = "is in the sandbox's own scratch " + step->target +
              " (empty at start, gone at exit): the host's files there are not seen";
      if (step->target == spec.home_path) {
        v.allow = grant("read_only", v.path) + "; or `filesystem: {home: workspace}`";
      } else {
        v.allow = grant("read_only", v.path);
      }
      return v;
    case MountStep::Kind::proc:
    case MountStep::Kind::dev:
      v.decision = D::sandbox_own;
      v.denied = false;
      v.rule = step->kind == MountStep::Kind::proc ? "the sandbox's own /proc" : "the sandbox's own /dev";
      v.why = "is in " + v.rule + ": only the sandbox's processes and devices are there";
      return v;
    case MountStep::Kind::symlink:
      break;
  }
  return v;
}

bool hidden_by_policy(const Policy& policy, const CompileContext& context, const SandboxSpec& spec,
                      PathVerdict* verdict) {
  if (verdict->decision == PathVerdict::Decision::hidden) return true;
  if (!verdict->denied) return false;
  // A hide entry over it wins at compile time whatever else lists it; the plan drops one where nothing showed it.
  const PathVars vars{context.cwd, spec.workspace, context.home, context.tmpdir};
  for (const auto& item : policy.filesystem.hide) {
    auto hidden = expand_path(item.text, PathRole::absolute, vars);
    if (!hidden || !path_within(verdict->path, normalise_path(*hidden))) continue;
    verdict->decision = PathVerdict::Decision::hidden;
    verdict->rule = "filesystem.hide";
    verdict->why = "is hidden by the policy (filesystem.hide: " + normalise_path(*hidden) + ")";
    verdict->allow = "nothing in a policy that extends this one shows it again: a hidden path stays hidden; drop it "
                     "from the hide list of a policy of your own that does not extend this profile";
    return true;
  }
  return false;
}

PathVerdict explain_path(const Policy& policy, const CompileContext& context, const SandboxSpec& spec,
                         const std::string& path, PathAccess access) {
  PathVerdict verdict = path_verdict(spec, path, access);
  if (!verdict.denied || verdict.allow.empty() || hidden_by_policy(policy, context, spec, &verdict)) return verdict;
  Policy granted = policy;
  PolicyOverrides grant;
  (access == PathAccess::write ? grant.read_write : grant.read_only).push_back(verdict.path);
  std::vector<Diagnostic> errors;
  apply_overrides(granted, grant, context, errors);
  auto after = errors.empty() ? compile(granted, context) : Result<SandboxSpec>(Status::error(errors[0].message));
  if (!after) {
    const std::string message = after.status().message();
    verdict.allow.clear();
    verdict.why += "; granting it is refused: " + message.substr(0, message.find('\n'));
    return verdict;
  }
  if (path_verdict(*after, path, access).denied) verdict.allow.clear();
  return verdict;
}

std::string describe(const PathVerdict& verdict) {
  std::string line = verdict.path + " " + verdict.why;
  if (!verdict.denied) return line;
  if (verdict.allow.empty()) return line + "; no policy line allows it";
  return line + "; to allow it: " + verdict.allow;
}

}  // namespace oishell::policy
