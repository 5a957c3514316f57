// write_learned_policy(): observations of a learning run to the least policy on top of the `default` profile,
// compiled against a fake host. Every output is loaded and compiled again by the project's own loader.
#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "policy/compiler.h"
#include "policy/learn_writer.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

using policy::LearnedPath;
using Mode = LearnedPath::Mode;

// The common fake host plus data outside the home and the system.
const FakeHostFs& host() {
  static const FakeHostFs fs = [] {
    FakeHostFs h = fake_host();
    h.file("/srv/data/a.csv").file("/srv/data/b.csv").file("/srv/data/c.csv");
    h.file("/srv/two/x.txt").file("/srv/two/y.txt").dir("/srv/out");
    h.file("/opt/tool/bin/tool").file("/home/user/datasets/train.csv").file("/home/user/.ssh/known_hosts");
    return h;
  }();
  return fs;
}

CompileContext context() {
  CompileContext c = fake_context();
  c.fs = &host();
  return c;
}

// A base: the `default` profile, or `text` on top of it.
struct Base {
  SandboxSpec spec;
  policy::BaseFacts facts;
};
Base base(const std::string& text = "version: 1\nextends: default\n") {
  auto loaded = load_text(text);
  EXPECT_TRUE(loaded.ok()) << policy::format_diagnostics(loaded.errors);
  auto spec = policy::compile(loaded.policy, context());
  EXPECT_TRUE(spec.is_ok()) << (spec ? "" : spec.status().message());
  if (!spec) return {};
  return Base{*spec, policy::base_facts(loaded.policy, context(), *spec)};
}

policy::LearnRun run_of(std::vector<LearnedPath> paths) {
  policy::LearnRun run;
  run.extends = "default";
  run.command = {"python3", "train.py", "--out", "my file"};
  run.paths = std::move(paths);
  return run;
}

policy::LearnResult learn(const policy::LearnRun& run, const Base& b = base(),
                          const std::optional<std::string>& existing = std::nullopt) {
  auto r = policy::write_learned_policy(run, b.spec, b.facts, host(), existing);
  EXPECT_TRUE(r.is_ok()) << (r ? "" : r.status().message());
  return r ? *r : policy::LearnResult{};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The text loads with the project's loader and compiles against the same host.
SandboxSpec compiles(const std::string& text) {
  auto loaded = load_text(text);
  EXPECT_TRUE(loaded.ok()) << policy::format_diagnostics(loaded.errors) << "\n" << text;
  auto spec = policy::compile(loaded.policy, context());
  EXPECT_TRUE(spec.is_ok()) << (spec ? "" : spec.status().message()) << "\n" << text;
  return spec ? *spec : SandboxSpec{};
}

bool mounted(const SandboxSpec& spec, MountStep::Kind kind, const std::string& target) {
  return std::any_of(spec.mounts.begin(), spec.mounts.end(),
                     [&](const MountStep& m) { return m.kind == kind && m.target == target; });
}

TEST(LearnWriter, HiddenPathsAreWantedNotGranted) {
  // /etc/shadow has a hide step (under the /etc bind); ~/.ssh has none (the tmpfs home hides it), yet a grant
  // below it would be dropped by compile: both are reported, neither granted.
  auto r = learn(run_of({{"/etc/shadow", Mode::read, "cat"}, {"/home/user/.ssh/known_hosts", Mode::read, "ssh", 2}}));
  EXPECT_EQ((std::vector<std::string>{"/etc/shadow (hidden by the base)",
                                      "/home/user/.ssh/known_hosts (hidden by the base)"}),
            r.wanted_not_granted);
  EXPECT_TRUE(has(r.text, "# Wanted, not granted")) << r.text;
  EXPECT_TRUE(has(r.text, "#   /home/user/.ssh/known_hosts (hidden by the base)   # ssh: read (2 times)\n")) << r.text;
  EXPECT_FALSE(has(r.text, "filesystem:")) << r.text;
  EXPECT_TRUE(r.added.empty());
  compiles(r.text);
}

TEST(LearnWriter, ReadUnderTheTmpfsHomeIsGrantedReadOnly) {
  auto r = learn(run_of({{"/home/user/datasets/train.csv", Mode::read, "python3", 4},
                         {"/home/user/never-existed", Mode::read, "python3"},      // nothing on the host to show
                         {"/home/user/scratch.txt", Mode::write, "python3"},       // the tmpfs takes it
                         {"/home/user/project/out.bin", Mode::write, "python3"},   // the workspace is writable
                         {"/usr/lib/libc.so.6", Mode::exec, "python3"}}));         // /usr is bound read-only
  EXPECT_TRUE(has(r.text, "filesystem:\n  read_only:\n"
                          "    - /home/user/datasets/train.csv   # python3: read (4 times)\n"))
      << r.text;
  EXPECT_FALSE(has(r.text, "read_write")) << r.text;
  EXPECT_EQ(1u, r.added.size());
  SandboxSpec spec = compiles(r.text);
  EXPECT_TRUE(mounted(spec, MountStep::Kind::bind_ro, "/home/user/datasets/train.csv"));
}

TEST(LearnWriter, WriteUnderAReadOnlyBindIsGrantedReadWrite) {
  Base b = base("version: 1\nextends: default\nfilesystem: {read_only: [/srv]}\n");
  auto r = learn(run_of({{"/srv/data/a.csv", Mode::write, "python3"}, {"/srv/data/b.csv", Mode::read, "python3"}}), b);
  EXPECT_TRUE(has(r.text, "  read_write:\n    - /srv/data/a.csv   # python3: wrote (1 time)\n")) << r.text;
  EXPECT_FALSE(has(r.text, "read_only")) << r.text;  // the read is the base's
}

TEST(LearnWriter, WriteToAMissingPathGrantsTheNearestExistingDirectory) {
  auto r = learn(run_of({{"/srv/out/run1/model.bin", Mode::write, "python3", 3},
                         {"/usr/lib/newlib.so", Mode::write, "ld"}}));
  EXPECT_TRUE(has(r.text, "  read_write:\n    - /srv/out   # python3: wrote 1 file (3 times)\n")) << r.text;
  EXPECT_EQ((std::vector<std::string>{"/usr/lib/newlib.so (not writable: its nearest existing directory /usr/lib: "
                                      "it is inside the system directory /usr)"}),
            r.wanted_not_granted);
  SandboxSpec spec = compiles(r.text);
  EXPECT_TRUE(mounted(spec, MountStep::Kind::bind_rw, "/srv/out"));
}

TEST(LearnWriter, AWriteWhoseNearestDirectoryIsTheHomeIsRefused) {
  // Without a tmpfs home, a new file in the home would need the home itself writable.
  Base b = base("version: 1\nextends: default\nfilesystem: {home: none}\n");
  auto r = learn(run_of({{"/home/user/new.txt", Mode::write, "touch"}}), b);
  EXPECT_EQ((std::vector<std::string>{
                "/home/user/new.txt (not writable: its nearest existing directory /home/user: it is your home "
                "directory)"}),
            r.wanted_not_granted);
  EXPECT_FALSE(has(r.text, "read_write")) << r.text;
}

TEST(LearnWriter, ProtectedAndTooWidePathsAreNotGranted) {
  auto r = learn(run_of({{"/home/user/project/.envrc", Mode::write, "direnv"},  // protect step in the workspace
                         {"/home/user/project/.envrc", Mode::read, "direnv"},   // reading it is fine
                         {"/srv", Mode::read, "ls"}}));                          // a shared root, listed
  EXPECT_EQ((std::vector<std::string>{"/home/user/project/.envrc (protected by the base)",
                                      "/srv (too wide to grant: it is /srv, which holds what is not yours to give "
                                      "away)"}),
            r.wanted_not_granted);
  EXPECT_FALSE(has(r.text, "filesystem:")) << r.text;
}

TEST(LearnWriter, AWriteInTheTmpfsUnderAReadGrantNeedsReadWrite) {
  // Reading ~/datasets's entries binds it read-only over the tmpfs home: the file written there next to them
  // would then be refused, so the directory is granted read-write instead.
  auto r = learn(run_of({{"/home/user/datasets/train.csv", Mode::read, "python3"},
                         {"/home/user/datasets", Mode::read, "python3"},
                         {"/home/user/datasets/new.csv", Mode::write, "python3"},
                         {"/home/user/elsewhere.txt", Mode::write, "python3"}}));  // still the tmpfs's
  EXPECT_TRUE(has(r.text, "filesystem:\n  read_write:\n"
                          "    - /home/user/datasets   # python3: read 2 files, wrote 1 file (3 times)\n"))
      << r.text;
  EXPECT_FALSE(has(r.text, "read_only")) << r.text;
  SandboxSpec spec = compiles(r.text);
  EXPECT_TRUE(mounted(spec, MountStep::Kind::bind_rw, "/home/user/datasets"));
}

TEST(LearnWriter, ThreeFilesOfADirectoryBecomeTheDirectory) {
  auto r = learn(run_of({{"/srv/data/a.csv", Mode::read, "python3", 10},
                         {"/srv/data/b.csv", Mode::read, "python3"},
                         {"/srv/data/c.csv", Mode::read, "python3"},
                         {"/srv/two/x.txt", Mode::read, "python3"},
                         {"/srv/two/y.txt", Mode::read, "sh"},
                         {"/opt/tool/bin/tool", Mode::exec, "sh"}}));
  EXPECT_TRUE(has(r.text, "  read_only:\n"
                          "    - /opt/tool/bin/tool   # sh: ran (1 time)\n"
                          "    - /srv/data   # python3: read 3 files (12 times)\n"
                          "    - /srv/two/x.txt   # python3: read (1 time)\n"
                          "    - /srv/two/y.txt   # sh: read (1 time)\n"))
      << r.text;
  SandboxSpec spec = compiles(r.text);
  EXPECT_TRUE(mounted(spec, MountStep::Kind::bind_ro, "/srv/data"));
}

TEST(LearnWriter, AReadWriteGrantCoversTheReadsBelowIt) {
  auto r = learn(run_of({{"/srv/out", Mode::write, "make"}, {"/srv/out", Mode::read, "make", 2}}));
  EXPECT_FALSE(has(r.text, "read_only")) << r.text;
  EXPECT_TRUE(has(r.text, "    - /srv/out   # make: read, wrote (3 times)\n")) << r.text;
}

TEST(LearnWriter, DestinationsMergePortsPerHostAndProtocol) {
  auto run = run_of({});
  run.destinations = {{"pypi.org", 443, HostRule::Protocol::tcp, "pip", 2},
                      {"PyPI.org.", 80, HostRule::Protocol::tcp, "curl"},
                      {"pypi.org", 443, HostRule::Protocol::tcp, "pip", 3},
                      {"ntp.example", 123, HostRule::Protocol::udp, "chronyd", 4}};
  auto r = learn(run);
  EXPECT_TRUE(has(r.text, "network:\n  allow:\n"
                          "    - {host: ntp.example, ports: [123], protocol: udp}   # chronyd: connected (4 times)\n"
                          "    - {host: pypi.org, ports: [80, 443]}   # curl: connected 1 port (1 time); "
                          "pip: connected 1 port (5 times)\n"))
      << r.text;
  SandboxSpec spec = compiles(r.text);
  EXPECT_EQ(NetDecision::Verdict::allow, decide(spec.network, "pypi.org", 80).verdict);
  EXPECT_EQ(NetDecision::Verdict::allow, decide(spec.network, "ntp.example", 123, HostRule::Protocol::udp).verdict);
  EXPECT_EQ(NetDecision::Verdict::deny, decide(spec.network, "ntp.example", 124, HostRule::Protocol::udp).verdict);
}

TEST(LearnWriter, SyscallsTheBaseDeniesAreAllowed) {
  auto run = run_of({});
  run.syscalls = {{"ptrace", "gdb", 2}, {"process_vm_readv", "gdb"}};
  auto r = learn(run);
  EXPECT_TRUE(has(r.text, "process:\n  allow_syscalls:\n"
                          "    - process_vm_readv   # gdb: called (1 time)\n"
                          "    - ptrace   # gdb: called (2 times)\n"))
      << r.text;
  SandboxSpec spec = compiles(r.text);
  EXPECT_NE(spec.seccomp.allow_syscalls.end(),
            std::find(spec.seccomp.allow_syscalls.begin(), spec.seccomp.allow_syscalls.end(), "ptrace"));
}

TEST(LearnWriter, LimitsAreTwiceThePeakRoundedUpToAPowerOfTwo) {
  auto run = run_of({});
  run.peak_memory_bytes = 100ull << 20;
  run.peak_processes = 5;
  auto r = learn(run);
  EXPECT_TRUE(has(r.text, "limits:\n  memory: 256MiB   # peak 100.0 MiB,")) << r.text;
  EXPECT_TRUE(has(r.text, "  pids: 16   # peak 5,")) << r.text;
  SandboxSpec spec = compiles(r.text);
  EXPECT_EQ(256ull << 20, spec.limits.memory_bytes);
  EXPECT_EQ(16u, spec.limits.pids);

  run.peak_memory_bytes = 3ull << 20;  // small: at least 64MiB
  run.peak_processes = 512;            // 1024 is the base's own: not repeated
  r = learn(run);
  EXPECT_TRUE(has(r.text, "  memory: 64MiB")) << r.text;
  EXPECT_FALSE(has(r.text, "pids")) << r.text;
}

TEST(LearnWriter, TheHeaderNamesTheCommandAndAFailedRun) {
  auto run = run_of({});
  run.syscalls = {{"ptrace", "gdb"}};
  auto r = learn(run);
  EXPECT_TRUE(r.text.starts_with("# Learned by `oishell learn` from: python3 train.py --out 'my file'\n")) << r.text;
  EXPECT_FALSE(has(r.text, "failed")) << r.text;
  EXPECT_TRUE(has(r.text, "version: 1\nextends: default\n")) << r.text;
  run.exit_status = 3;
  run.command.push_back("evil\nversion: 2");  // cannot end the comment
  r = learn(run);
  EXPECT_TRUE(has(r.text, "# Note: the learning run failed (exit 3): what it did not reach is not listed.\n"))
      << r.text;
  EXPECT_TRUE(has(r.text, "'evil\\x0aversion: 2'")) << r.text;
  compiles(r.text);
}

policy::LearnRun big_run() {
  auto run = run_of({{"/srv/data/a.csv", Mode::read, "python3"},
                     {"/srv/data/b.csv", Mode::read, "python3"},
                     {"/srv/data/c.csv", Mode::read, "python3"},
                     {"/srv/out/model.bin", Mode::write, "python3"},
                     {"/home/user/datasets/train.csv", Mode::read, "python3"},
                     {"/etc/shadow", Mode::read, "python3"}});
  run.destinations = {{"pypi.org", 443, HostRule::Protocol::tcp, "pip"}};
  run.syscalls = {{"ptrace", "gdb"}};
  run.peak_memory_bytes = 1ull << 30;
  run.peak_processes = 40;
  run.exit_status = 1;
  return run;
}

TEST(LearnWriter, TheOutputLoadsAndCompiles) {
  auto r = learn(big_run());
  SandboxSpec spec = compiles(r.text);
  EXPECT_TRUE(mounted(spec, MountStep::Kind::bind_ro, "/srv/data"));
  EXPECT_TRUE(mounted(spec, MountStep::Kind::bind_rw, "/srv/out"));
  EXPECT_TRUE(mounted(spec, MountStep::Kind::bind_ro, "/home/user/datasets/train.csv"));
  EXPECT_TRUE(mounted(spec, MountStep::Kind::hide, "/etc/shadow"));
  EXPECT_EQ(2ull << 30, spec.limits.memory_bytes);
  EXPECT_EQ(128u, spec.limits.pids);
  EXPECT_EQ(7u, r.added.size()) << ::testing::PrintToString(r.added);
}

// `text` without the lines that are not in `original`, in order: what widening kept.
std::string without_new_lines(const std::string& text, const std::string& original) {
  std::istringstream in(text);
  std::string out, line;
  size_t at = 0;
  while (std::getline(in, line)) {
    size_t next = original.find(line + "\n", at);
    if (next == at) {
      out += line + "\n";
      at += line.size() + 1;
    }
  }
  return out;
}

TEST(LearnWriter, WideningInsertsOnlyNewEntriesAndKeepsEveryLine) {
  auto first_run = run_of({{"/srv/two/x.txt", Mode::read, "python3"}});
  first_run.syscalls = {{"ptrace", "gdb"}};
  first_run.destinations = {{"pypi.org", 443, HostRule::Protocol::tcp, "pip"}};
  std::string first = learn(first_run).text + "# a note of my own\n";

  auto r = learn(big_run(), base(), first);
  EXPECT_EQ(first, without_new_lines(r.text, first)) << r.text;
  EXPECT_TRUE(has(r.text, "  read_only:\n    - /srv/two/x.txt   # python3: read (1 time)\n"
                          "    - /home/user/datasets/train.csv   # python3: read (1 time)\n"
                          "    - /srv/data   # python3: read 3 files (3 times)\n"
                          "  read_write:\n    - /srv/out   # python3: wrote 1 file (1 time)\n"
                          "network:\n"))
      << r.text;
  EXPECT_FALSE(has(r.text, "ptrace   # gdb: called (1 time)\n    - ptrace")) << r.text;  // not duplicated
  EXPECT_TRUE(has(r.text, "limits:\n  memory: 2GiB")) << r.text;                       // a new section
  EXPECT_TRUE(has(r.text, "#   /etc/shadow (hidden by the base)")) << r.text;
  EXPECT_EQ(5u, r.added.size()) << ::testing::PrintToString(r.added);  // not pypi.org:443 nor ptrace again
  compiles(r.text);

  // Widening again with the same run adds nothing.
  auto again = learn(big_run(), base(), r.text);
  EXPECT_EQ(r.text, again.text);
  EXPECT_TRUE(again.added.empty()) << ::testing::PrintToString(again.added);

  // A new port of a listed host is a new line of its own; the listed one stays as it was.
  auto more = run_of({});
  more.destinations = {{"pypi.org", 443, HostRule::Protocol::tcp, "pip"}, {"pypi.org", 80, HostRule::Protocol::tcp, "pip"}};
  auto wider = learn(more, base(), r.text);
  EXPECT_TRUE(has(wider.text, "    - {host: pypi.org, ports: [443]}   # pip: connected (1 time)\n"
                              "    - {host: pypi.org, ports: [80]}   # pip: connected (1 time)\n"))
      << wider.text;
}

TEST(LearnWriter, AForeignLayoutIsRefusedWithAWayOut) {
  auto run = run_of({{"/srv/two/x.txt", Mode::read, "python3"}});
  run.destinations = {{"pypi.org", 443, HostRule::Protocol::tcp, "pip"}};
  const Base b = base();
  for (const char* existing : {"version: 1\nextends: default\nnetwork: {allow: [example.com]}\n",
                               "version: 1\nextends: default\nfilesystem:\n  read_only: [/srv/one]\n",
                               "version: 1\nextends: default\nnetwork:\n  allow:\n  - example.com\n",
                               "version: 1\nextends: default\nfilesystem: [\n"}) {
    auto r = policy::write_learned_policy(run, b.spec, b.facts, host(), std::string(existing));
    ASSERT_FALSE(r.is_ok()) << existing;
    const std::string& message = r.status().message();
    EXPECT_TRUE(has(message, "not in the layout `oishell learn` writes")) << message;
    EXPECT_TRUE(has(message, "-o ANOTHER_FILE")) << message;
    EXPECT_TRUE(has(message, "`oishell diff`")) << message;
  }
  // A flow list where nothing is inserted is left alone.
  auto r = policy::write_learned_policy(run, b.spec, b.facts, host(),
                                        std::string("version: 1\nextends: default\nenv: {pass: [LANG]}\n"));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_TRUE(r->text.starts_with("version: 1\nextends: default\nenv: {pass: [LANG]}\nfilesystem:\n")) << r->text;
}

}  // namespace
}  // namespace oishell::testing
