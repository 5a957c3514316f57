// The built-in profiles and a few policies compiled against a fixed fake host, compared with golden JSON files
// (tests/unit/golden/*.json). OISHELL_UPDATE_GOLDEN=1 rewrites them; review the diff like code.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "policy/compiler.h"
#include "policy/spec_json.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_golden(const SandboxSpec& spec, const std::string& name) {
  std::string actual = spec_to_json(spec).dump(2) + "\n";
  std::string path = std::string(OISHELL_GOLDEN_DIR) + "/" + name + ".json";
  if (const char* update = std::getenv("OISHELL_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path) << actual;
  }
  std::string expected = read_file(path);
  ASSERT_FALSE(expected.empty()) << "missing golden file " << path << " (run with OISHELL_UPDATE_GOLDEN=1)";
  EXPECT_EQ(expected, actual) << "compiled spec differs from " << path;
}

SandboxSpec compile_profile(const std::string& name) {
  auto spec = compile_policy(PolicySource{"", name}, PolicyOverrides{}, fake_context());
  EXPECT_TRUE(spec.is_ok()) << (spec ? "" : spec.status().message());
  return spec ? *spec : SandboxSpec{};
}

TEST(CompileGolden, DefaultProfile) { expect_golden(compile_profile("default"), "default"); }
TEST(CompileGolden, OfflineProfile) { expect_golden(compile_profile("offline"), "offline"); }
TEST(CompileGolden, StrictProfile) { expect_golden(compile_profile("strict"), "strict"); }
TEST(CompileGolden, PythonDevProfile) { expect_golden(compile_profile("python-dev"), "python-dev"); }

TEST(CompileGolden, WorkspaceIsHomeShowsHideSteps) {
  CompileContext context = fake_context();
  context.cwd = "/home/user";
  PolicyOverrides allow;
  allow.allow_home_workspace = true;  // refused without it (workspace_guard_test.cc)
  auto spec = compile_policy(PolicySource{"", "default"}, allow, context);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  expect_golden(*spec, "default-workspace-home");
}

TEST(CompileGolden, ExtrasAndOverrides) {
  auto loaded = load_text(R"(version: 1
extends: default
filesystem:
  read_only: [~/datasets, $HOME/cache-link]
  read_write: [$TMPDIR/build]
  hide: [~/datasets/private]
network:
  allow: [example.com, "*.example.org:443", {host: api.example.net, ports: [443, 8443]}]
  deny: ["*.internal.example.org"]
  allow_private: [127.0.0.0/8]
  hosts: {api.example.net: 127.0.0.2}
process:
  allow_syscalls: [ptrace]
  nested_namespaces: true
limits: {memory: 512MiB, wall_time: 1h30m, cpu_time: 90s}
env:
  pass: [LANG, MISSING_VAR]
  set: {FOO: bar, LANG: C}
)");
  ASSERT_TRUE(loaded.ok()) << policy::format_diagnostics(loaded.errors);
  PolicyOverrides overrides;
  overrides.read_only = {"/etc/ssh"};
  overrides.allow_domains = {"download.example.com"};
  overrides.env_set = {"EXTRA=1"};
  overrides.wall_time = "30s";
  std::vector<policy::Diagnostic> errors;
  policy::apply_overrides(loaded.policy, overrides, fake_context(), errors);
  ASSERT_TRUE(errors.empty()) << policy::format_diagnostics(errors);
  auto spec = policy::compile(loaded.policy, fake_context());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  expect_golden(*spec, "extras-and-overrides");
}

TEST(SpecJson, RoundTripsEveryGolden) {
  for (const char* name : {"default", "strict", "extras-and-overrides", "default-workspace-home"}) {
    std::string text = read_file(std::string(OISHELL_GOLDEN_DIR) + "/" + name + ".json");
    ASSERT_FALSE(text.empty()) << name;
    auto spec = spec_from_json(nlohmann::json::parse(text));
    ASSERT_TRUE(spec.is_ok()) << name << ": " << spec.status().message();
    EXPECT_EQ(text, spec_to_json(*spec).dump(2) + "\n") << name;
  }
}

TEST(SpecJson, RejectsUnknownEnumNames) {
  std::string text = read_file(std::string(OISHELL_GOLDEN_DIR) + "/default.json");
  auto json = nlohmann::json::parse(text);
  json["mounts"][0]["kind"] = "bind_everything";
  auto spec = spec_from_json(json);
  ASSERT_FALSE(spec.is_ok());
  EXPECT_NE(std::string::npos, spec.status().message().find("unknown value `bind_everything`"));
}

}  // namespace
}  // namespace oishell::testing
