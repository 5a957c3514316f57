// extends resolution and merge rules: scalars override, lists append, hide and deny always win.
#include <algorithm>

#include <gtest/gtest.h>

#include "policy/compiler.h"
#include "policy/mount_plan.h"
#include "policy/spec_json.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

TEST(Extends, BuiltinProfilesLoad) {
  for (const auto& name : policy::builtin_profile_names()) {
    auto r = policy::load_profile(name);
    EXPECT_TRUE(r.ok()) << name << ": " << policy::format_diagnostics(r.errors);
    EXPECT_FALSE(r.policy.description.empty()) << name;
  }
  auto names = policy::builtin_profile_names();
  for (const char* expected : {"default", "offline", "strict", "python-dev"}) {
    EXPECT_NE(names.end(), std::find(names.begin(), names.end(), expected)) << expected;
  }
}

TEST(Extends, UnknownProfileIsAnErrorWithSuggestion) {
  EXPECT_EQ("test.yaml:2:10: extends: unknown profile `defualt` (did you mean `default`?)",
            errors_of("version: 1\nextends: defualt\n"));
}

TEST(Extends, UnknownProfileByName) {
  auto r = policy::load_profile("nonesuch");
  ASSERT_EQ(1u, r.errors.size());
  EXPECT_NE(std::string::npos, r.errors[0].format().find("unknown profile `nonesuch` (built-in profiles: default"));
  r = policy::load_profile("../etc/passwd");
  ASSERT_EQ(1u, r.errors.size());
}

TEST(Extends, ErrorsInTheParentNameTheParentFile) {
  TempDir dir;
  dir.write("base.yaml", "version: 1\nnetwork: {mode: nope}\n");
  std::string child = dir.write("child.yaml", "version: 1\nextends: base.yaml\nlimits: {pids: 0}\n");
  auto r = policy::load_policy_file(child);
  std::string e = policy::format_diagnostics(r.errors);
  EXPECT_NE(std::string::npos, e.find(dir.path() + "/base.yaml:2:17: network.mode: unknown value `nope`")) << e;
  EXPECT_NE(std::string::npos, e.find(child + ":3:16: limits.pids: out of range: 0")) << e;
}

TEST(Merge, ScalarsOverrideListsAppend) {
  auto r = load_text(R"(version: 1
extends: default
filesystem:
  hide: [~/.my-secrets, ~/.ssh]
network:
  on_unlisted: deny
  allow: [example.com]
limits: {memory: 1GiB}
env:
  pass: [LANG, EDITOR]
  set: {PYTHONUNBUFFERED: "0"}
)");
  ASSERT_TRUE(r.ok()) << policy::format_diagnostics(r.errors);
  const auto& p = r.policy;
  EXPECT_EQ(OnUnlisted::deny, *p.network.on_unlisted.value);
  EXPECT_EQ(1ull << 30, *p.limits.memory_bytes.value);
  EXPECT_EQ(1024u, *p.limits.pids.value);  // inherited
  // Lists append, without duplicates.
  auto count = [&](const std::string& text) {
    return std::count_if(p.filesystem.hide.begin(), p.filesystem.hide.end(),
                         [&](const policy::PathItem& i) { return i.text == text; });
  };
  EXPECT_EQ(1, count("~/.ssh"));
  EXPECT_EQ(1, count("~/.my-secrets"));
  EXPECT_EQ(1, count("~/.aws"));
  EXPECT_EQ("~/.my-secrets", p.filesystem.hide.back().text);
  ASSERT_EQ(1u, p.network.allow.size());
  EXPECT_EQ("EDITOR", p.env.pass.back().first);
  EXPECT_EQ(1, std::count_if(p.env.pass.begin(), p.env.pass.end(), [](const auto& e) { return e.first == "LANG"; }));
  EXPECT_EQ((std::pair<std::string, std::string>{"PYTHONUNBUFFERED", "0"}), p.env.set.front());
  ASSERT_EQ(2u, p.chain.size());
  EXPECT_TRUE(p.chain[0].starts_with("profile default")) << p.chain[0];
  EXPECT_EQ("test.yaml", p.chain[1]);
}

TEST(Merge, HideWinsOverAReadOnlyExtra) {
  auto r = load_text("version: 1\nfilesystem:\n  read_only: [~/.ssh, ~/datasets]\n  hide: [~/.ssh]\n");
  ASSERT_TRUE(r.ok()) << policy::format_diagnostics(r.errors);
  auto spec = policy::compile(r.policy, fake_context());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  for (const auto& m : spec->mounts) EXPECT_NE("/home/user/.ssh", m.target) << to_string(m.kind);
  bool datasets = std::any_of(spec->mounts.begin(), spec->mounts.end(),
                              [](const MountStep& m) { return m.target == "/home/user/datasets"; });
  EXPECT_TRUE(datasets);
}

TEST(Merge, AChildCannotUnhideOrUndeny) {
  TempDir dir;
  dir.write("base.yaml", "version: 1\nfilesystem: {hide: [~/.aws]}\nnetwork: {deny: [evil.example.com]}\n");
  std::string child = dir.write("child.yaml", R"(version: 1
extends: base.yaml
filesystem: {read_write: [~/.aws]}
network: {allow: [evil.example.com], allow_all: true}
)");
  auto r = policy::load_policy_file(child);
  ASSERT_TRUE(r.ok()) << policy::format_diagnostics(r.errors);
  auto spec = policy::compile(r.policy, fake_context());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  for (const auto& m : spec->mounts) EXPECT_NE("/home/user/.aws", m.target);
  EXPECT_EQ(NetDecision::Verdict::deny, decide(spec->network, "evil.example.com", 443).verdict);
  EXPECT_EQ(NetDecision::Verdict::allow, decide(spec->network, "good.example.com", 443).verdict);
}

TEST(Merge, OverridesAddButNeverWeaken) {
  auto r = policy::load_profile("default");
  ASSERT_TRUE(r.ok());
  PolicyOverrides o;
  o.read_write = {"/home/user/.ssh", "datasets-relative"};
  o.allow_domains = {"example.com", "*"};
  o.allow_udp = {"ntp.example", "ntp.example:123,124"};
  o.env_set = {"HOME=/evil", "OK=1", "novalue"};
  o.net_mode = "sideways";
  o.memory = "1";
  o.wall_time = "forever";
  std::vector<policy::Diagnostic> errors;
  policy::apply_overrides(r.policy, o, fake_context(), errors);
  std::string e = policy::format_diagnostics(errors);
  EXPECT_NE(std::string::npos, e.find("command line: --allow-domain: ")) << e;
  EXPECT_NE(std::string::npos, e.find("command line: --allow-udp: `ntp.example` names no port")) << e;
  EXPECT_NE(std::string::npos, e.find("command line: --allow-udp: host rule `ntp.example:123,124`: several ports")) << e;
  EXPECT_NE(std::string::npos, e.find("command line: --env: `HOME=/evil`: set by oishell")) << e;
  EXPECT_NE(std::string::npos, e.find("command line: --env: `novalue`: expected NAME=VALUE")) << e;
  EXPECT_NE(std::string::npos, e.find("command line: --net: unknown mode `sideways`")) << e;
  EXPECT_NE(std::string::npos, e.find("command line: --memory:")) << e;
  EXPECT_NE(std::string::npos, e.find("command line: --timeout:")) << e;
  EXPECT_EQ(8u, errors.size()) << e;
  // The relative --rw resolved against the cwd; ~/.ssh stays hidden even though --rw names it.
  EXPECT_EQ("/home/user/project/datasets-relative", r.policy.filesystem.read_write.back().text);
}

// --allow-udp HOST:PORT is a udp rule for that one port: it allows datagrams there, and no stream, and no other port.
TEST(Merge, AllowUdpIsAUdpRuleForOnePort) {
  auto r = policy::load_profile("default");
  ASSERT_TRUE(r.ok());
  PolicyOverrides o;
  o.allow_udp = {"ntp.example:123"};
  std::vector<policy::Diagnostic> errors;
  policy::apply_overrides(r.policy, o, fake_context(), errors);
  ASSERT_TRUE(errors.empty()) << policy::format_diagnostics(errors);
  auto spec = policy::compile(r.policy, fake_context());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  const auto udp = HostRule::Protocol::udp;
  EXPECT_EQ(NetDecision::Verdict::allow, decide(spec->network, "ntp.example", 123, udp).verdict);
  EXPECT_EQ(NetDecision::Verdict::deny, decide(spec->network, "ntp.example", 124, udp).verdict);
  EXPECT_NE(NetDecision::Verdict::allow, decide(spec->network, "ntp.example", 123).verdict);  // tcp: ask
}

TEST(Compile, HostProblemsAreErrorsNamingTheLine) {
  auto r = load_text("version: 1\nfilesystem:\n  read_only: [/nonexistent/dir]\n");
  ASSERT_TRUE(r.ok());
  auto spec = policy::compile(r.policy, fake_context());
  ASSERT_FALSE(spec.is_ok());
  EXPECT_EQ("test.yaml:3:15: filesystem.read_only: /nonexistent/dir does not exist on this host (create it, or "
            "remove the entry)",
            spec.status().message());

  r = load_text("version: 1\nfilesystem: {workspace: /home/user/missing}\n");
  spec = policy::compile(r.policy, fake_context());
  ASSERT_FALSE(spec.is_ok());
  EXPECT_EQ("test.yaml:2:25: filesystem.workspace: workspace /home/user/missing is not an existing directory "
            "(create it, or run elsewhere)",
            spec.status().message());

  r = load_text("version: 1\nfilesystem: {workspace: /home/user/project, hide: [~/project]}\n");
  spec = policy::compile(r.policy, fake_context());
  ASSERT_FALSE(spec.is_ok());
  EXPECT_NE(std::string::npos, spec.status().message().find("the workspace /home/user/project is inside hidden path"));
}

TEST(Compile, WorkspaceMayNotBeTheHostRootOrProc) {
  for (const char* ws : {"/", "/proc", "/dev"}) {
    auto r = load_text(std::string("version: 1\nfilesystem: {workspace: \"") + ws + "\"}\n");
    ASSERT_TRUE(r.ok()) << ws;
    FakeHostFs fs = fake_host();
    CompileContext c = fake_context();
    c.fs = &fs;
    auto spec = policy::compile(r.policy, c);
    EXPECT_FALSE(spec.is_ok()) << ws;
  }
}

TEST(Compile, ProtectFollowsSymlinksOnlyWithinWritableBinds) {
  // link-out -> /etc: already read-only, so no protect step for it; the link itself is watched (it is in the
  // writable workspace), as is missing-file, which may appear during the run. Only .envrc gets a protect step.
  auto r = load_text("version: 1\nfilesystem: {protect: [link-out, .envrc, missing-file, src/missing/deep]}\n");
  ASSERT_TRUE(r.ok());
  auto spec = policy::compile(r.policy, fake_context());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  EXPECT_EQ((std::vector<std::string>{"/home/user/project/link-out", "/home/user/project/.envrc",
                                      "/home/user/project/missing-file", "/home/user/project/src/missing/deep"}),
            spec->protected_paths);
  std::vector<std::string> protect_steps;
  for (const auto& step : spec->mounts) {
    if (step.kind == MountStep::Kind::protect) protect_steps.push_back(step.target);
  }
  // .git is read-only whole (filesystem.git: read_only, the default).
  EXPECT_EQ((std::vector<std::string>{"/home/user/project/.git", "/home/user/project/.envrc"}), protect_steps);
}

TEST(Compile, ProtectOutsideWritableBindsIsNotWatched) {
  // A read-only workspace cannot be written, so nothing in it is bound again or watched.
  auto r = load_text("version: 1\nfilesystem: {workspace_read_only: true, protect: [.envrc, missing-file]}\n");
  ASSERT_TRUE(r.ok());
  auto spec = policy::compile(r.policy, fake_context());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  EXPECT_TRUE(spec->protected_paths.empty());
}

TEST(Compile, EnvNeverCarriesAnUnnamedVariable) {
  auto spec = compile_policy(PolicySource{"", "default"}, PolicyOverrides{}, fake_context());
  ASSERT_TRUE(spec.is_ok());
  for (const auto& [name, value] : spec->env) {
    EXPECT_NE("SECRET_TOKEN", name);
    EXPECT_NE("do-not-leak", value);
    EXPECT_NE("http://corp-proxy:8080", value);
  }
  EXPECT_EQ("PATH", spec->env.front().first);
  EXPECT_EQ("/usr/local/bin:/usr/bin:/bin", spec->env.front().second);

  auto offline = compile_policy(PolicySource{"", "offline"}, PolicyOverrides{}, fake_context());
  ASSERT_TRUE(offline.is_ok());
  for (const auto& [name, value] : offline->env) EXPECT_EQ(std::string::npos, name.find("PROXY")) << name;
  EXPECT_TRUE(offline->landlock.tcp_connect_ports.empty());
}

// Proxy mode: /etc/resolv.conf names the DNS stub (the plan's last step, so no bind covers it) and Landlock lets
// TCP reach the stub's port; mode none changes neither.
TEST(Compile, ProxyModeResolvConfNamesTheStub) {
  auto spec = compile_policy(PolicySource{"", "default"}, PolicyOverrides{}, fake_context());
  ASSERT_TRUE(spec.is_ok());
  ASSERT_FALSE(spec->mounts.empty());
  const MountStep& last = spec->mounts.back();
  EXPECT_EQ(MountStep::Kind::file, last.kind);
  EXPECT_EQ("/etc/resolv.conf", last.target);
  EXPECT_TRUE(last.optional);
  EXPECT_NE(std::string::npos, last.source.find("\nnameserver 127.0.0.1\n"));
  EXPECT_EQ(std::string::npos, last.source.find("search"));
  EXPECT_EQ((std::vector<uint16_t>{3128, 1080, 53}), spec->landlock.tcp_connect_ports);
  EXPECT_EQ(1, std::count_if(spec->mounts.begin(), spec->mounts.end(),
                             [](const MountStep& m) { return m.kind == MountStep::Kind::file; }));

  auto offline = compile_policy(PolicySource{"", "offline"}, PolicyOverrides{}, fake_context());
  ASSERT_TRUE(offline.is_ok());
  for (const auto& m : offline->mounts) EXPECT_NE(MountStep::Kind::file, m.kind) << m.target;
}

TEST(Compile, ResolvConfSaysWhenThePortCannotBeNamed) {
  NetworkSpec net;
  EXPECT_EQ(std::string::npos, policy::resolv_conf_step(net).source.find("port"));
  net.dns_port = 5353;
  EXPECT_NE(std::string::npos, policy::resolv_conf_step(net).source.find("listens on port 5353"));
}

}  // namespace
}  // namespace oishell::testing
