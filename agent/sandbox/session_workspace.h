#pragma once
// The directory a sandboxed session works in. The working directory the agent was started in, unless that is one
// the sandbox refuses to make writable for a reason that is about the user, not the project: the home directory,
// a directory containing it, or `/`. Then the session gets a fresh directory of its own, kept after it:
// $XDG_DATA_HOME/oishell/workspaces/<date>_<time> (else ~/.local/share/...), the home staying readable only as the
// policy says. A session never dies for where it was started. (--sandbox none confines nothing: no workspace is
// chosen there; the code runs where the agent was started.)
#include <ctime>
#include <string>

#include "agent/llm/provider.h"
#include "base/status.h"

namespace oishell::agent {

struct SessionWorkspace {
  std::string path;        // the workspace: `cwd`, or the fresh directory
  std::string started_in;  // set when a fresh directory was made: where the agent was started
  std::string why;         // set with it: "your home directory", "a directory containing your home directory", ...
};

// Why `dir` (a real path) is not a workspace the session may write, in the user's words; empty when it is.
std::string home_like_refusal(const std::string& dir, const std::string& real_home);

// The session's workspace for a process started in `cwd` (a real path); `now` names a fresh one. A fresh directory
// is created 0700 (with its parents); an error only when it cannot be.
Result<SessionWorkspace> choose_session_workspace(const EnvLookup& env, const std::string& cwd, std::time_t now);

// The notice that says so, for the banner's neighbour: where the code works and why, and how to work elsewhere.
std::string fresh_workspace_notice(const SessionWorkspace& ws);

}  // namespace oishell::agent
