// The guarantee table (policy/guarantees.h): every guarantee of the default profile is held on Landlock ABI 0 to 7,
// by the layers each ABI brings; a machine without seccomp filters loses the kernel guarantee, and `required`
// refuses naming it, the feature and the options.
#include "policy/guarantees.h"
#include "policy/seccomp_sets.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace oishell {
namespace {

SandboxSpec default_like() {
  SandboxSpec spec;
  spec.workspace = "/home/u/project";
  spec.mounts = {{MountStep::Kind::bind_ro, "/usr", "/usr"},
                 {MountStep::Kind::bind_rw, "/home/u/project", "/home/u/project"},
                 {MountStep::Kind::hide, "", "/home/u/.ssh"}};
  spec.seccomp.deny_sets = {"mount_and_pivot", "terminal_injection", "sockets", "io_uring", "setid_files"};
  spec.network.mode = NetMode::proxy;
  return spec;
}

LayerFacts at(int abi, bool seccomp = true) {
  LayerFacts facts;
  facts.landlock_abi = abi;
  facts.landlock_kernel_abi = 7;
  facts.landlock_cap = abi;
  facts.seccomp_filter = seccomp;
  return facts;
}

const GuaranteeState& find(const std::vector<GuaranteeState>& all, const std::string& id) {
  auto it = std::find_if(all.begin(), all.end(), [&](const GuaranteeState& g) { return g.id == id; });
  if (it == all.end()) throw std::runtime_error("no guarantee " + id);
  return *it;
}

std::vector<std::string> names(const std::vector<Layer>& layers) {
  std::vector<std::string> out;
  for (const auto& l : layers) out.push_back(l.name);
  return out;
}

TEST(Guarantees, EveryOneIsHeldAtEveryLandlockAbi) {
  for (int abi = 0; abi <= kLandlockAbiKnown; ++abi) {
    auto all = assess_guarantees(default_like(), at(abi));
    ASSERT_EQ(all.size(), 15u);
    for (const auto& g : all) EXPECT_TRUE(g.held()) << g.id << " at ABI " << abi;
    EXPECT_EQ(refusal(all), "") << abi;
    EXPECT_EQ(fewer_layers(all).empty(), abi >= 6) << abi;
  }
}

TEST(Guarantees, EachAbiAddsItsLayer) {
  auto three = assess_guarantees(default_like(), at(3));
  EXPECT_EQ(names(find(three, "net.exit").held_by), std::vector<std::string>{"network namespace"});
  ASSERT_EQ(find(three, "net.exit").missing.size(), 1u);
  EXPECT_EQ(find(three, "net.exit").missing[0].name, "Landlock TCP port rules");
  EXPECT_EQ(find(three, "net.exit").missing[0].needs, "Landlock ABI 4 (Linux 6.7); in use: ABI 3");
  EXPECT_EQ(names(find(three, "fs.write").held_by),
            (std::vector<std::string>{"mount namespace", "Landlock filesystem rules (from ABI 3)"}));

  auto four = assess_guarantees(default_like(), at(4));
  EXPECT_EQ(names(find(four, "net.exit").held_by),
            (std::vector<std::string>{"network namespace", "Landlock TCP port rules (from ABI 4)"}));
  EXPECT_EQ(names(find(four, "ipc.signal").held_by), std::vector<std::string>{"pid namespace"});

  auto six = assess_guarantees(default_like(), at(6));
  EXPECT_EQ(names(find(six, "ipc.signal").held_by),
            (std::vector<std::string>{"pid namespace", "Landlock scopes (from ABI 6)"}));
  EXPECT_EQ(names(find(six, "dev").held_by),
            (std::vector<std::string>{"mount namespace", "seccomp (terminal_injection)",
                                      "Landlock device ioctl rules (from ABI 5)"}));

  // Truncation is what ABI 3 adds for writes: at 1 and 2 the filesystem rules are not counted for fs.write.
  auto two = assess_guarantees(default_like(), at(2));
  EXPECT_EQ(names(find(two, "fs.write").held_by), std::vector<std::string>{"mount namespace"});
  EXPECT_EQ(names(find(two, "fs.outside").held_by),
            (std::vector<std::string>{"mount namespace", "Landlock filesystem rules (from ABI 1)"}));
  // Hidden paths lie beneath readable ones: only the mount namespace hides them, at every ABI.
  EXPECT_EQ(names(find(six, "fs.hidden").held_by), std::vector<std::string>{"mount namespace"});
}

TEST(Guarantees, StatementsNameThePolicysPaths) {
  auto all = assess_guarantees(default_like(), at(7));
  EXPECT_EQ(find(all, "fs.write").statement,
            "Only the workspace is writable on the host (git metadata and protected files read-only).");
  SandboxSpec more = default_like();
  more.mounts.push_back({MountStep::Kind::bind_rw, "/home/u/project/sub", "/home/u/project/sub"});  // inside: not again
  more.mounts.push_back({MountStep::Kind::bind_rw, "/srv/data", "/srv/data"});
  EXPECT_EQ(find(assess_guarantees(more, at(7)), "fs.write").statement,
            "Only the workspace and /srv/data are writable on the host (git metadata and protected files "
            "read-only).");
  EXPECT_EQ(find(all, "fs.hidden").statement, "Hidden paths (/home/u/.ssh) cannot be read.");
  SandboxSpec none = default_like();
  none.network.mode = NetMode::none;
  EXPECT_EQ(find(assess_guarantees(none, at(7)), "net.exit").statement, "No connection leaves the sandbox.");
}

TEST(Guarantees, WithoutSeccompTheKernelGuaranteeIsLostAndRequiredRefuses) {
  auto all = assess_guarantees(default_like(), at(7, false));
  EXPECT_FALSE(find(all, "kernel").held());
  // The guarantees seccomp alone holds go with it; the others keep their other layers.
  for (const char* id : {"fs.setid", "net.sockets", "seccomp.sight"}) EXPECT_FALSE(find(all, id).held()) << id;
  EXPECT_EQ(names(find(all, "priv.setid").held_by), (std::vector<std::string>{"mount namespace", "capabilities"}));
  const std::string why = refusal(all);
  EXPECT_EQ(why.rfind("landlock (required): fs.setid (No file with a set-user-ID or set-group-ID bit can be made "
                      "(none is left on the host).) would be held by no layer here; it needs seccomp (setid_files): a "
                      "kernel with seccomp filters; ",
                      0),
            0u)
      << why;
  EXPECT_NE(why.find("kernel (The kernel interfaces of the policy's deny sets (mount_and_pivot, terminal_injection, "
                     "sockets, io_uring, setid_files) cannot be used.) would be held by no layer here; it needs "
                     "seccomp: a kernel with seccomp filters (CONFIG_SECCOMP_FILTER). Options: run on a kernel with "
                     "that feature, or set `landlock: best_effort` in the policy to run without it (`oishell doctor` "
                     "shows what holds each guarantee here)"),
            std::string::npos)
      << why;
  auto lines = fewer_layers(all);
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "kernel: held by NO layer; not by seccomp (needs a kernel with seccomp filters "
                      "(CONFIG_SECCOMP_FILTER))"),
            lines.end());
}

// A call taken out of a set by process.allow_syscalls is read from the program's sets (what the compiler loads), not
// from the set names: the guarantee that set held is lost, says why, and `landlock: required` does not refuse for it
// (the policy's own choice, which no kernel would give back). The kernel guarantee names what was taken out.
TEST(Guarantees, ACallTakenOutOfASetWaivesWhatTheSetHeld) {
  SandboxSpec spec = default_like();
  spec.seccomp.allow_syscalls = {"socket", "socketpair"};
  auto all = assess_guarantees(spec, at(7));
  const auto& sockets = find(all, "net.sockets");
  EXPECT_FALSE(sockets.held());
  EXPECT_EQ(sockets.waived_by,
            std::vector<std::string>{"process.allow_syscalls takes socket and socketpair out of the sockets set"});
  EXPECT_TRUE(find(all, "seccomp.sight").held());
  EXPECT_TRUE(find(all, "fs.setid").held());
  EXPECT_EQ(refusal(all), "");
  EXPECT_TRUE(find(all, "kernel").held());
  EXPECT_EQ(find(all, "kernel").statement,
            "The kernel interfaces of the policy's deny sets (mount_and_pivot, terminal_injection, sockets, io_uring, "
            "setid_files) cannot be used, but for what process.allow_syscalls takes out (socket and socketpair from "
            "sockets).");
  // Taking ioctl out of terminal_injection loses the dev guarantee though the mount namespace still holds a part.
  spec.seccomp.allow_syscalls = {"ioctl"};
  EXPECT_FALSE(find(assess_guarantees(spec, at(7)), "dev").held());
}

// io_uring and setid_files are the floor: a spec that lifts one of their calls or leaves the set out does not
// compile, and its guarantees say so rather than claim the sets' layers.
TEST(Guarantees, TheFloorSetsCannotBeLiftedOrLeftOut) {
  for (const char* call : {"io_uring_setup", "io_uring_enter", "io_uring_register", "chmod", "openat"}) {
    SeccompSpec seccomp = default_like().seccomp;
    seccomp.allow_syscalls = {call};
    auto sets = seccomp_sets::sets_in_effect(seccomp);
    ASSERT_FALSE(sets.is_ok()) << call;
    EXPECT_EQ(sets.status().message().rfind(std::string("seccomp: allow_syscalls cannot take out `") + call + "`: ", 0),
              0u)
        << sets.status().message();
  }
  SeccompSpec without = default_like().seccomp;
  without.deny_sets = {"mount_and_pivot", "setid_files"};
  auto sets = seccomp_sets::sets_in_effect(without);
  ASSERT_FALSE(sets.is_ok());
  EXPECT_EQ(sets.status().message(),
            "seccomp: the deny sets leave out `io_uring`, which every sandbox holds (io_uring (bypasses seccomp for "
            "the operations it performs))");
  SandboxSpec spec = default_like();
  spec.seccomp = without;
  auto all = assess_guarantees(spec, at(7));
  EXPECT_FALSE(find(all, "kernel").held());
  EXPECT_FALSE(find(all, "seccomp.sight").held());
  // The allowed neighbour: the default sets with a call of another set taken out.
  SeccompSpec ptrace = default_like().seccomp;
  ptrace.allow_syscalls = {"ptrace"};
  EXPECT_TRUE(seccomp_sets::sets_in_effect(ptrace).is_ok());
}

TEST(Guarantees, DescribeLandlockSaysWhereTheAbiComesFrom) {
  EXPECT_EQ(describe_landlock(at(3)), "ABI 3 (capped by OISHELL_LANDLOCK_ABI=3; the kernel has ABI 7)");
  LayerFacts kernel;
  kernel.landlock_abi = kernel.landlock_kernel_abi = 4;
  EXPECT_EQ(describe_landlock(kernel), "ABI 4 (the kernel's)");
  LayerFacts newer;  // Debian sid's 7.2 (tools/dev kernels newest)
  newer.landlock_abi = newer.landlock_kernel_abi = 10;
  EXPECT_EQ(describe_landlock(newer), "ABI 10 (the kernel's; oishell uses ABI 7's rights, the newest it knows)");
  LayerFacts none;
  EXPECT_EQ(describe_landlock(none), "none (the kernel has no Landlock, or it is disabled)");
  EXPECT_EQ(describe_landlock(at(0)), "none (capped by OISHELL_LANDLOCK_ABI=0; the kernel has ABI 7)");
}

}  // namespace
}  // namespace oishell
