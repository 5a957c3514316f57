// CompileContext::from_process: the one place policy/ reads the host (cwd, $HOME, $TMPDIR, environ).
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/compile.h"

extern char** environ;

namespace oishell {

CompileContext CompileContext::from_process() {
  CompileContext context;
  char buf[4096];
  if (::getcwd(buf, sizeof buf)) context.cwd = buf;
  if (const char* home = std::getenv("HOME"); home && *home) {
    context.home = home;
  } else {
    // No $HOME (e.g. under `env -i`): the account's home, so `~` in hide lists still means the real one.
    struct passwd pw {};
    struct passwd* found = nullptr;
    char pwbuf[4096];
    if (::getpwuid_r(::getuid(), &pw, pwbuf, sizeof pwbuf, &found) == 0 && found && found->pw_dir) {
      context.home = found->pw_dir;
    }
  }
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) context.tmpdir = tmp;
  context.process_env = environ;
  return context;
}

std::optional<std::string> CompileContext::env(const std::string& name) const {
  if (auto it = host_env.find(name); it != host_env.end()) return it->second;
  for (const char* const* e = process_env; e && *e; ++e) {
    std::string_view entry(*e);
    if (entry.size() > name.size() && entry[name.size()] == '=' && entry.compare(0, name.size(), name) == 0) {
      return std::string(entry.substr(name.size() + 1));
    }
  }
  return std::nullopt;
}

}  // namespace oishell
