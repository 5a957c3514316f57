// The guarantee table (policy/guarantees.h): every guarantee of the default profile is held on Landlock ABI 0 to 7,
// by the layers each ABI brings; a machine without seccomp filters loses the kernel guarantee, and `required`
// refuses naming it, the feature and the options.
#include "policy/guarantees.h"

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
  spec.seccomp.deny_sets = {"mount_and_pivot", "terminal_injection", "setid_files"};
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
    ASSERT_EQ(all.size(), 12u);
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
  // Other guarantees keep their other layers.
  EXPECT_EQ(names(find(all, "priv.setid").held_by), (std::vector<std::string>{"mount namespace", "capabilities"}));
  EXPECT_EQ(refusal(all),
            "landlock (required): kernel (The kernel interfaces of the policy's deny sets (mount_and_pivot, "
            "terminal_injection, setid_files) cannot be used.) would be held by no layer here; it needs seccomp: a "
            "kernel with seccomp filters (CONFIG_SECCOMP_FILTER). Options: run on a kernel with that feature, or set "
            "`landlock: best_effort` in the policy to run without it (`oishell doctor` shows what holds each "
            "guarantee here)");
  auto lines = fewer_layers(all);
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "kernel: held by NO layer; not by seccomp (needs a kernel with seccomp filters "
                      "(CONFIG_SECCOMP_FILTER))"),
            lines.end());
}

TEST(Guarantees, DescribeLandlockSaysWhereTheAbiComesFrom) {
  EXPECT_EQ(describe_landlock(at(3)), "ABI 3 (capped by OISHELL_LANDLOCK_ABI=3; the kernel has ABI 7)");
  LayerFacts kernel;
  kernel.landlock_abi = kernel.landlock_kernel_abi = 4;
  EXPECT_EQ(describe_landlock(kernel), "ABI 4 (the kernel's)");
  LayerFacts none;
  EXPECT_EQ(describe_landlock(none), "none (the kernel has no Landlock, or it is disabled)");
  EXPECT_EQ(describe_landlock(at(0)), "none (capped by OISHELL_LANDLOCK_ABI=0; the kernel has ABI 7)");
}

}  // namespace
}  // namespace oishell
