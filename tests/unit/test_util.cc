// Helpers for the policy unit tests: see test_util.h.
#include "tests/unit/test_util.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "policy/policy.h"

namespace oishell::testing {

const FakeHostFs& fake_host() {
  static const FakeHostFs host = [] {
    FakeHostFs fs;
    fs.dir("/usr/bin").dir("/usr/sbin").dir("/usr/lib").dir("/usr/lib64").dir("/usr/local/bin");
    fs.symlink("/bin", "usr/bin").symlink("/sbin", "usr/sbin").symlink("/lib", "usr/lib");
    fs.symlink("/lib64", "usr/lib64");
    fs.dir("/etc").file("/etc/passwd").file("/etc/shadow").file("/etc/gshadow").dir("/etc/ssh");
    fs.dir("/proc").dir("/dev").dir("/tmp/build");
    fs.dir("/home/user/.ssh").dir("/home/user/.aws").dir("/home/user/.config").dir("/home/user/datasets");
    fs.dir("/home/user/project/.git/hooks").file("/home/user/project/.git/config").dir("/home/user/project/.vscode");
    fs.file("/home/user/project/.envrc").dir("/home/user/project/src");
    fs.symlink("/home/user/project/link-out", "/etc");
    fs.dir("/data/cache").symlink("/home/user/cache-link", "/data/cache");
    fs.dir("/home/user/.config/gh").file("/home/user/.config/gh/token").file("/etc/ssl/internal-ca.pem");
    return fs;
  }();
  return host;
}

CompileContext fake_context() {
  CompileContext c;
  c.cwd = "/home/user/project";
  c.home = "/home/user";
  c.tmpdir = "/tmp";
  c.host_env = {{"LANG", "C.UTF-8"}, {"TERM", "xterm-256color"}, {"SECRET_TOKEN", "do-not-leak"},
                {"PATH", "/root/.pyenv/shims:/usr/bin"}, {"HTTP_PROXY", "http://corp-proxy:8080"}};
  c.fs = &fake_host();
  return c;
}

policy::LoadResult load_text(const std::string& text) {
  return policy::load_policy_text(text, "test.yaml", OISHELL_SOURCE_DIR);
}

std::string errors_of(const std::string& text) { return policy::format_diagnostics(load_text(text).errors); }

SandboxSpec compiled_spec(const std::string& text) {
  auto r = load_text(text);
  EXPECT_TRUE(r.ok()) << policy::format_diagnostics(r.errors);
  auto spec = policy::compile(r.policy, fake_context());
  EXPECT_TRUE(spec.is_ok()) << (spec ? "" : spec.status().message());
  return spec ? *spec : SandboxSpec{};
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "oishell-unit-XXXXXX").string();
  char* made = ::mkdtemp(tmpl.data());
  path_ = made ? made : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& content) const {
  std::string full = path_ + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(full).parent_path());
  std::ofstream(full, std::ios::binary) << content;
  return full;
}

}  // namespace oishell::testing
