#pragma once
// The policy fuzz targets' shared body (policy_yaml.cc, policy_json.cc).
#include <cstdint>
#include <string>
#include <string_view>

#include "policy/compile.h"
#include "policy/compiler.h"
#include "policy/explain.h"
#include "policy/host_fs.h"
#include "policy/load.h"
#include "tests/fuzz/fuzz_input.h"

namespace oishell::fuzz {

// A small fixed host: the compile never looks at the real filesystem, so a run is reproducible anywhere.
inline const FakeHostFs& fuzz_host() {
  static const FakeHostFs host = [] {
    FakeHostFs fs;
    fs.dir("/usr").dir("/bin").dir("/lib").dir("/etc").dir("/home/user/project").dir("/tmp").dir("/var/run");
    fs.file("/etc/hosts", "127.0.0.1 localhost\n").file("/home/user/.netrc", "machine x\n");
    fs.symlink("/lib64", "/usr/lib64").socket("/var/run/docker.sock");
    return fs;
  }();
  return host;
}

inline void load_and_compile_policy(const uint8_t* data, size_t size, const std::string& file) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // `extends:` relative to a directory that does not exist: only the built-in profiles resolve.
  policy::LoadResult loaded = policy::load_policy_text(text, file, "/nonexistent-fuzz-dir");
  if (!loaded.ok()) {
    FUZZ_CHECK(!loaded.errors.empty());
    return;
  }
  CompileContext context;
  context.cwd = "/home/user/project";
  context.home = "/home/user";
  context.host_env = {{"HOME", "/home/user"}, {"TOKEN", "s3cret-token"}, {"PATH", "/usr/bin:/bin"}};
  context.fs = &fuzz_host();
  Result<SandboxSpec> spec = policy::compile(loaded.policy, context);
  if (!spec) return;
  const std::string text_out = explain(loaded.policy, *spec);
  FUZZ_CHECK(!text_out.empty());
}

}  // namespace oishell::fuzz
