#include "runtime/executors/denial_explainer.h"

#include <cerrno>
#include <string>

#include "runtime/executors/denial_scan.h"

namespace oishell::executors {
namespace {

const char* errno_name(int error) {
  switch (error) {
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EROFS: return "EROFS";
    case ENOENT: return "ENOENT";
    default: return "?";
  }
}

const char* decision_name(policy::PathVerdict::Decision d) {
  using D = policy::PathVerdict::Decision;
  switch (d) {
    case D::allowed: return "allowed";
    case D::hidden: return "hidden";
    case D::read_only: return "read_only";
    case D::protected_: return "protected";
    case D::outside: return "outside";
    case D::scratch: return "scratch";
    case D::sandbox_own: return "sandbox_own";
  }
  return "?";
}

// The layer that refuses: what is not in the mount tree (hidden, outside) is absent; a read-only bind refuses a
// write with EROFS; Landlock refuses the same where its rules cover the path (both follow the mount plan).
const char* layer_of(policy::PathVerdict::Decision d) {
  using D = policy::PathVerdict::Decision;
  return d == D::read_only || d == D::protected_ ? "mounts (read-only bind) and Landlock" : "mounts";
}

}  // namespace

policy::PathVerdict DenialExplainer::verdict(const std::string& path, policy::PathAccess access) const {
  // Not explain_path: trying its advice compiles a grant, which looks at the host ("does not exist on this host"),
  // and the path is the sandbox's choice: an existence oracle for code inside. The policy's hides are pure.
  policy::PathVerdict v = policy::path_verdict(spec_, path, access);
  if (source_) policy::hidden_by_policy(source_->first, source_->second, spec_, &v);
  return v;
}

std::vector<nlohmann::json> DenialExplainer::explain(std::string_view id, std::string_view output) {
  std::vector<nlohmann::json> events;
  for (const PathFailure& failure : scan_path_failures(output)) {
    std::string path = failure.path;
    if (path.starts_with("~/")) path = spec_.home_path + path.substr(1);
    // Writing, when the message says so; otherwise reading, and writing when reading is allowed (Python's
    // `open(p, "w")` says only "Permission denied"). A missing file is the sandbox's doing only when it hides or
    // leaves out the path: never a write verdict.
    auto access = failure.writing ? policy::PathAccess::write : policy::PathAccess::read;
    policy::PathVerdict verdict = this->verdict(path, access);
    if (!verdict.denied && !failure.writing && failure.error != ENOENT) {
      access = policy::PathAccess::write;
      verdict = this->verdict(path, access);
    }
    // The sandbox's own scratch /tmp hides the host's files there, but a file missing in it is most often one the
    // program never made: not said. The empty home is said: the user's files are what a program looks for there.
    // Either way the supervisor does not look on the host (what exists there is not the sandbox's to learn).
    if (!verdict.denied) continue;
    if (verdict.decision == policy::PathVerdict::Decision::scratch && verdict.rule != "filesystem.home") continue;
    const char* access_name = access == policy::PathAccess::write ? "write" : "read";
    auto repeated = reported_.admit(verdict.path + "\n" + access_name, 0);
    if (!repeated) continue;
    nlohmann::json event = {{"event", "fs.denied"},
                            {"id", std::string(id)},
                            {"path", verdict.path},
                            {"access", access_name},
                            {"errno", errno_name(failure.error)},
                            {"decision", decision_name(verdict.decision)},
                            {"rule", verdict.rule},
                            {"layer", layer_of(verdict.decision)},
                            {"message", policy::describe(verdict)},
                            {"repeated", *repeated}};
    if (!verdict.allow.empty()) event["allow"] = verdict.allow;
    events.push_back(std::move(event));
  }
  return events;
}

}  // namespace oishell::executors
