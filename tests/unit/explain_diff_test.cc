// explain(), diff_specs() and the schema, on the fixed fake host.
#include <gtest/gtest.h>

#include "policy/compiler.h"
#include "policy/explain.h"
#include "policy/parse.h"
#include "policy/schema.h"
#include "policy/units.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

struct Compiled {
  policy::Policy policy;
  SandboxSpec spec;
};

Compiled compile_text(const std::string& text) {
  auto r = load_text(text);
  EXPECT_TRUE(r.ok()) << policy::format_diagnostics(r.errors);
  auto spec = policy::compile(r.policy, fake_context());
  EXPECT_TRUE(spec.is_ok()) << (spec ? "" : spec.status().message());
  return Compiled{r.policy, spec ? *spec : SandboxSpec{}};
}

Compiled compile_extending(const std::string& name) { return compile_text("version: 1\nextends: " + name + "\n"); }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Explain, DefaultProfileInPlainSentences) {
  auto c = compile_extending("default");
  std::string e = policy::explain(c.policy, c.spec);
  EXPECT_TRUE(contains(e, "Policy: test.yaml extends profile default")) << e;
  EXPECT_TRUE(contains(e, "The workspace /home/user/project is readable and writable; commands start there.")) << e;
  EXPECT_TRUE(contains(e, "The system directories /usr, /etc are readable and executable, not writable (/bin -> "
                          "usr/bin, /sbin -> usr/sbin"))
      << e;
  EXPECT_TRUE(contains(e, "The home directory /home/user is empty, private and writable")) << e;
  EXPECT_TRUE(contains(e, "Hidden, although a parent is visible: /etc/gshadow, /etc/shadow, /etc/ssh.")) << e;
  EXPECT_TRUE(contains(e, "Read-only inside the workspace, because tools on the host run them later: "
                          "/home/user/project/.git, /home/user/project/.envrc"))
      << e;
  EXPECT_TRUE(contains(e, "Git: the workspace's repository metadata (.git) is read-only")) << e;
  EXPECT_TRUE(contains(e, "Git repositories created or changed during the run")) << e;
  EXPECT_TRUE(contains(e, "Any other destination is asked about")) << e;
  EXPECT_TRUE(contains(e, "Creating namespaces (containers inside) is not allowed.")) << e;
  EXPECT_TRUE(contains(e, "memory 4 GiB, at most 1024 processes, files up to 16 GiB, at most 4096 open files.")) << e;
  EXPECT_TRUE(contains(e, "No limit on CPU time, wall time.")) << e;
  EXPECT_TRUE(contains(e, "Exactly these variables: PATH, LANG, TERM, PYTHONUNBUFFERED, HOME, PWD, HTTP_PROXY")) << e;
}

// A root caller's read-only paths are not id-mapped (policy/mount_plan.h): explain names those where root-only
// files stay unreadable, and not a read-only path inside the writable workspace (mapped, as the workspace is).
TEST(Explain, SaysWhereARootCallersRootOnlyFilesStayUnreadable) {
  auto c = compile_text("version: 1\nextends: default\nfilesystem:\n  read_only: [/etc, /home/user/project/.vscode]\n");
  std::string e = policy::explain(c.policy, c.spec);
  EXPECT_TRUE(contains(e, "Started by root, the sandbox is root inside but an unused id outside, and read-only paths "
                          "are not id-mapped: in /etc, as in the system directories, files that only root may read"))
      << e;
  auto plain = compile_extending("default");
  EXPECT_FALSE(contains(policy::explain(plain.policy, plain.spec), "Started by root"));
  auto strict = compile_extending("strict");  // a read-only workspace
  EXPECT_TRUE(
      contains(policy::explain(strict.policy, strict.spec), "are not id-mapped: in /home/user/project, as in"));
}

TEST(Explain, NetworkRulesAndOffline) {
  auto c = compile_text(R"(version: 1
network:
  allow: [example.com, "*.example.org:443", {host: api.example.net, ports: [443, 8443]}]
  deny: ["*.internal.example.org"]
  allow_private: [127.0.0.0/8]
  hosts: {api.example.net: 127.0.0.2}
)");
  std::string e = policy::explain(c.policy, c.spec);
  EXPECT_TRUE(contains(e, "Always denied: any subdomain of internal.example.org (not internal.example.org itself) on "
                          "any port."))
      << e;
  EXPECT_TRUE(contains(e, "Allowed, inspected: example.com on any port; any subdomain of example.org (not example.org itself) on "
                          "port 443; api.example.net on ports 443, 8443."))
      << e;
  EXPECT_TRUE(contains(e, "Any other destination is denied.")) << e;
  EXPECT_TRUE(contains(e, "Loopback, private, link-local and multicast addresses, this machine's own addresses and "
                          "cloud metadata endpoints (169.254.169.254, Azure's 168.63.129.16, ...) are refused, except "
                          "127.0.0.0/8.")) << e;
  EXPECT_TRUE(contains(e, "api.example.net resolves to 127.0.0.2 (pinned).")) << e;

  auto offline = compile_extending("offline");
  e = policy::explain(offline.policy, offline.spec);
  EXPECT_TRUE(contains(e, "No network: the sandbox has only its own loopback")) << e;
  EXPECT_FALSE(contains(e, "HTTP_PROXY")) << e;
}

TEST(Explain, StrictSaysReadOnlyWorkspaceAndLimits) {
  auto c = compile_extending("strict");
  std::string e = policy::explain(c.policy, c.spec);
  EXPECT_TRUE(contains(e, "The workspace /home/user/project is readable but not writable")) << e;
  EXPECT_TRUE(contains(e, "seccomp, strict level")) << e;
  EXPECT_TRUE(contains(e, "CPU time 5m, wall time 15m")) << e;
  // Nothing is protected in a read-only workspace: the whole of it already is.
  EXPECT_FALSE(contains(e, "Read-only inside the workspace, because")) << e;
}

TEST(Diff, IdenticalPoliciesAllowTheSame) {
  auto a = compile_extending("default"), b = compile_extending("default");
  EXPECT_TRUE(policy::diff_specs(a.spec, b.spec).same());
}

TEST(Diff, DefaultVersusStrict) {
  auto def = compile_extending("default"), strict = compile_extending("strict");
  auto d = policy::diff_specs(def.spec, strict.spec);  // B = strict
  auto has = [](const std::vector<std::string>& lines, const std::string& text) {
    return std::find(lines.begin(), lines.end(), text) != lines.end();
  };
  std::string all_a, all_b;
  for (const auto& l : d.only_a) all_a += l + "\n";
  for (const auto& l : d.only_b) all_b += l + "\n";
  EXPECT_TRUE(d.only_b.empty()) << all_b;  // strict allows nothing default does not
  EXPECT_TRUE(has(d.only_a, "files: read and write /home/user/project (the other: read)")) << all_a;
  EXPECT_TRUE(has(d.only_a, "network: unlisted destinations are asked about (the other denies them)")) << all_a;
  EXPECT_TRUE(has(d.only_a, "processes: system calls of the `strict_extras` set (the other denies them)")) << all_a;
  EXPECT_TRUE(has(d.only_a, "limits: memory 4 GiB (the other: 1 GiB)")) << all_a;
  EXPECT_TRUE(has(d.only_a, "limits: wall time no limit (the other: 15m)")) << all_a;
}

TEST(Diff, NetworkFilesAndEnvBothWays) {
  auto a = compile_text(R"(version: 1
filesystem: {read_only: [~/datasets]}
network: {allow: [example.com], deny: [bad.example.com]}
env: {set: {A: "1"}}
)");
  auto b = compile_text(R"(version: 1
filesystem: {read_write: [~/datasets]}
network: {allow: [example.org], allow_all: true}
process: {allow_syscalls: [ptrace], nested_namespaces: true, own_proc: best_effort}
landlock: best_effort
)");
  auto d = policy::diff_specs(a.spec, b.spec);
  std::string only_b, only_a;
  for (const auto& l : d.only_b) only_b += l + "\n";
  for (const auto& l : d.only_a) only_a += l + "\n";
  EXPECT_EQ("files: read and write /home/user/datasets (the other: read)\n"
            "network: every public destination (allow_all)\n"
            "network: allow example.org\n"
            "network: bad.example.com is not denied (the other denies it)\n"
            "processes: system calls of the `namespaces` set (the other denies them)\n"
            "processes: the system call ptrace\n"
            "processes: starting without full Landlock support (best effort)\n"
            "processes: the container's /proc, with its other processes, where it masks /proc (best effort)\n",
            only_b);
  EXPECT_EQ("network: allow example.com\nenvironment: A\n", only_a);
}

TEST(Explain, OwnProcSaysWhatAMaskedProcCosts) {
  auto required = compile_text("version: 1\n");
  auto best_effort = compile_text("version: 1\nprocess: {own_proc: best_effort}\n");
  const std::string a = policy::explain(required.policy, required.spec);
  const std::string b = policy::explain(best_effort.policy, best_effort.spec);
  EXPECT_NE(std::string::npos, a.find("/proc shows only the sandbox's own processes (own_proc: required): where a "
                                      "container masks its /proc, the sandbox does not start.")) << a;
  EXPECT_NE(std::string::npos, b.find("it is the container's, read-only, and the container's other processes are "
                                      "listed (own_proc: best_effort")) << b;
}

TEST(Schema, ListsExactlyTheKeysTheParserKnows) {
  auto schema = policy::policy_schema();
  std::vector<std::string> keys;
  for (auto& [k, v] : schema["properties"].items()) keys.push_back(k);
  EXPECT_EQ(policy::top_level_keys(), keys);
  EXPECT_EQ(false, schema["additionalProperties"]);
  EXPECT_EQ(9u, schema["properties"]["filesystem"]["properties"].size());
  EXPECT_EQ(8u, schema["properties"]["network"]["properties"].size());
  EXPECT_EQ(6u, schema["properties"]["limits"]["properties"].size());
}

TEST(Units, SizesAndDurations) {
  EXPECT_EQ(2ull << 30, policy::parse_size("2GiB"));
  EXPECT_EQ(512ull << 20, policy::parse_size("512MiB"));
  EXPECT_EQ(100'000'000u, policy::parse_size("100MB"));
  EXPECT_EQ(4096u, policy::parse_size("4096"));
  EXPECT_EQ(std::nullopt, policy::parse_size("2 gigs"));
  EXPECT_EQ(std::nullopt, policy::parse_size("-1"));
  EXPECT_EQ(std::nullopt, policy::parse_size("99999999999999999999GiB"));
  EXPECT_EQ(std::nullopt, policy::parse_size("17179869184TiB"));  // overflows 64 bits
  EXPECT_EQ(30'000u, policy::parse_duration_ms("30s"));
  EXPECT_EQ(600'000u, policy::parse_duration_ms("10m"));
  EXPECT_EQ(5'400'000u, policy::parse_duration_ms("1h30m"));
  EXPECT_EQ(250u, policy::parse_duration_ms("250ms"));
  EXPECT_EQ(std::nullopt, policy::parse_duration_ms("30"));
  EXPECT_EQ(std::nullopt, policy::parse_duration_ms("30m1h"));
  EXPECT_EQ(std::nullopt, policy::parse_duration_ms("1m1m"));
  EXPECT_EQ("2 GiB", policy::format_size(2ull << 30));
  EXPECT_EQ("1000 bytes", policy::format_size(1000));
  EXPECT_EQ("1h30m", policy::format_duration_ms(5'400'000));
}

}  // namespace
}  // namespace oishell::testing
