#include "sandbox_fixture.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace oishell::test {

SandboxWorkspace::SandboxWorkspace() {
  dir_.write("ws/public.txt", "public\n");
  dir_.write("ws/secret.txt", "secret\n");
  dir_.write("ws/secretdir/key", "key\n");
  dir_.write("ws/.git/config", "[core]\n");
  dir_.write("ws/.git/HEAD", "ref: refs/heads/main\n");
  ::mkdir(path("ws/.git/hooks").c_str(), 0755);
  dir_.write("ro/file", "read-only\n");
  dir_.write("outside/file", "outside\n");
  dir_.write("policy.yaml", "version: 1\nextends: default\nfilesystem:\n  hide:\n    - " + ws() + "/secret.txt\n    - " +
                                ws() + "/secretdir\n");
}

std::vector<std::string> SandboxWorkspace::args(const std::vector<std::string>& extra) const {
  std::vector<std::string> out = {"--policy", policy(), "--workspace", ws(), "--ro", ro()};
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

std::string SandboxWorkspace::probe(const std::vector<std::string>& probe_args,
                                    const std::vector<std::string>& extra) const {
  return test::probe(args(extra), probe_args);
}

std::string SandboxWorkspace::read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace oishell::test
