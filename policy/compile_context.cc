// CompileContext::from_process: the one place policy/ reads the host (cwd, $HOME, $TMPDIR, environ).
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

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
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    context.host_env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return context;
}

}  // namespace oishell
