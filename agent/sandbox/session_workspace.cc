#include "agent/sandbox/session_workspace.h"

#include <limits.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

#include "agent/config/paths.h"

namespace oishell::agent {
namespace {

bool within(const std::string& path, const std::string& base) {
  return base == "/" || path == base || (path.size() > base.size() && path.starts_with(base) && path[base.size()] == '/');
}

std::string real_or_empty(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

// mkdir -p, 0700 for what it creates; EEXIST of a directory is fine.
Status make_dirs(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string part = slash == std::string::npos ? path : path.substr(0, slash);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return Status::from_errno(errno, "mkdir(\"" + part + "\")");
    if (slash == std::string::npos) return Status::ok();
  }
}

std::string workspaces_dir(const EnvLookup& env) {
  if (auto x = env("XDG_DATA_HOME"); x && !x->empty() && x->front() == '/') return *x + "/oishell/workspaces";
  return home_dir(env) + "/.local/share/oishell/workspaces";
}

}  // namespace

std::string home_like_refusal(const std::string& dir, const std::string& real_home) {
  if (dir == "/") return "the root directory";
  if (real_home.empty() || real_home == "/") return "";
  if (dir == real_home) return "your home directory";
  if (within(real_home, dir)) return "a directory containing your home directory";
  return "";
}

Result<SessionWorkspace> choose_session_workspace(const EnvLookup& env, const std::string& cwd, std::time_t now) {
  const std::string real_home = real_or_empty(home_dir(env));
  SessionWorkspace ws{cwd, "", home_like_refusal(cwd, real_home)};
  if (ws.why.empty()) return ws;
  char stamp[32];
  std::tm tm{};
  ::localtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &tm);
  const std::string parent = workspaces_dir(env);
  OI_TRY(make_dirs(parent).with_context("making the session's workspace"));
  // A second session in the same second gets -2, -3, ...: a workspace is never shared by accident.
  for (int n = 1; n < 100; ++n) {
    std::string path = parent + "/" + stamp + (n == 1 ? "" : "-" + std::to_string(n));
    if (::mkdir(path.c_str(), 0700) == 0) {
      ws.started_in = cwd;
      ws.path = real_or_empty(path);
      if (ws.path.empty()) return Status::from_errno(errno, "realpath(\"" + path + "\")");
      return ws;
    }
    if (errno != EEXIST) {
      return Status::from_errno(errno, "mkdir(\"" + path + "\")").with_context("making the session's workspace");
    }
  }
  return Status::error("making the session's workspace: 99 directories named " + parent + "/" + stamp + " exist");
}

std::string fresh_workspace_notice(const SessionWorkspace& ws) {
  return "Started in " + ws.started_in + ", " + ws.why + ": the sandbox does not let code write there. This "
         "session works in a fresh directory, kept after it: " + ws.path + " (what the sandbox shows of your home "
         "stays as the policy says, read-only at most). To work on a project, start interpreter in its directory.";
}

}  // namespace oishell::agent
