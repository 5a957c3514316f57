#pragma once
// Helpers for the policy unit tests: a fixed host (FakeHostFs + CompileContext) so compiled specs are stable,
// policy text loading, and temp files that clean up.
#include <string>
#include <vector>

#include "policy/compile.h"
#include "policy/host_fs.h"
#include "policy/load.h"

namespace oishell::testing {

// A Debian 12 host: merged /usr (/bin -> usr/bin ...), /etc with shadow and ssh, user `user` with secrets in
// ~/.ssh and ~/.aws, and a project at /home/user/project with .git/hooks, .git/config and .vscode.
const FakeHostFs& fake_host();
// cwd = the project, HOME = /home/user, TMPDIR = /tmp, a few environment variables (LANG, TERM, SECRET_TOKEN).
CompileContext fake_context();

// Loads `text` as a policy named "test.yaml" (extends resolve against the source tree's profiles).
policy::LoadResult load_text(const std::string& text);
// The joined diagnostics of `text` ("" when it is valid).
std::string errors_of(const std::string& text);
// `text` loaded and compiled against the fake host; a load or compile error fails the calling test (and an empty
// spec is returned).
SandboxSpec compiled_spec(const std::string& text);

// A temporary directory removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

}  // namespace oishell::testing
