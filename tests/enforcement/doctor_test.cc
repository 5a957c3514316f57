// `oishell doctor`: its JSON names the kernel's Landlock ABI, the ABI in use (capped by OISHELL_LANDLOCK_ABI) and
// seccomp support as this process sees them, its verdicts cover every security feature, each guarantee of the
// default profile is held at every ABI by the layers that ABI brings, and its exit status says whether the default
// sandbox starts. Each ABI from 0 to 7 is asked explicitly, whatever the suite's own cap.
#include <stdio.h>
#include <sys/wait.h>

#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.h"
#include "runtime/inside/landlock.h"

namespace oishell::test {
namespace {

struct Output {
  int status = -1;
  std::string out;
};

Output run(const std::string& command) {
  Output o;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return o;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
  int st = ::pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

std::string doctor_at(int cap, const char* args) {
  return "OISHELL_LANDLOCK_ABI=" + std::to_string(cap) + " " + oishell_bin() + " doctor " + args;
}

std::set<std::string> layers_of(const nlohmann::json& guarantees, const std::string& id) {
  std::set<std::string> out;
  for (const auto& g : guarantees) {
    if (g["id"] != id) continue;
    for (const auto& l : g["held_by"]) out.insert(l["layer"].get<std::string>());
  }
  return out;
}

TEST(Doctor, EachLandlockAbiHasItsVerdictAndEveryGuaranteeHolds) {
  const int kernel = landlock_abi_version();
  for (int cap = 0; cap <= 7; ++cap) {
    SCOPED_TRACE("OISHELL_LANDLOCK_ABI=" + std::to_string(cap));
    Output o = run(doctor_at(cap, "--json 2>/dev/null"));
    auto j = nlohmann::json::parse(o.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << o.out;
    const int in_use = std::min(cap, kernel);
    EXPECT_EQ(j["kernel"]["landlock"]["abi"], kernel);
    EXPECT_EQ(j["kernel"]["landlock"]["in_use"], in_use);
    EXPECT_EQ(j["kernel"]["landlock"]["cap"], cap);
    std::set<std::string> names;
    for (const auto& f : j["default_profile"]["features"]) names.insert(f["name"].get<std::string>());
    for (const char* n : {"namespaces", "landlock.filesystem", "landlock.tcp", "landlock.scopes", "capabilities",
                          "seccomp", "seccomp.reports", "terminal_injection", "network", "limits.memory",
                          "limits.pids"}) {
      EXPECT_TRUE(names.count(n)) << n << "\n" << o.out;
    }
    const auto& profile = j["default_profile"];
    // This machine (kernel 6.18, Landlock ABI 7, user namespaces on) holds every guarantee at every ABI, and
    // enforces the default profile in full from ABI 6 (7 adds only audit flags).
    EXPECT_TRUE(profile["every_guarantee_held"].get<bool>()) << o.out;
    EXPECT_TRUE(profile["starts"].get<bool>()) << o.out;
    EXPECT_EQ(o.status, 0);
    EXPECT_EQ(profile["enforced_in_full"].get<bool>(), in_use >= 6) << o.out;
    for (const auto& g : profile["guarantees"]) EXPECT_TRUE(g["held"].get<bool>()) << g.dump();
    const auto& g = profile["guarantees"];
    EXPECT_EQ(layers_of(g, "net.exit").count("Landlock TCP port rules (from ABI 4)"), in_use >= 4 ? 1u : 0u);
    EXPECT_EQ(layers_of(g, "net.exit").count("network namespace"), 1u);
    EXPECT_EQ(layers_of(g, "ipc.signal").count("Landlock scopes (from ABI 6)"), in_use >= 6 ? 1u : 0u);
    EXPECT_EQ(layers_of(g, "fs.write").count("Landlock filesystem rules (from ABI 3)"), in_use >= 3 ? 1u : 0u);
    EXPECT_EQ(layers_of(g, "fs.outside").count("Landlock filesystem rules (from ABI 1)"), in_use >= 1 ? 1u : 0u);

    Output text = run(doctor_at(cap, "2>&1"));
    EXPECT_EQ(text.status, 0);
    EXPECT_NE(text.out.find(in_use >= 6 ? "The default profile is enforced in full."
                                        : "Every guarantee of the default profile holds here;"),
              std::string::npos)
        << text.out;
  }
}

TEST(Doctor, ABadCapOrArgumentIsAnError) {
  Output bad = run("OISHELL_LANDLOCK_ABI=9 " + std::string(oishell_bin()) + " doctor 2>&1");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out,
            "oishell doctor: OISHELL_LANDLOCK_ABI=9: not a Landlock ABI from 0 to 7 (unset it to use the kernel's)\n");
  EXPECT_EQ(run(std::string(oishell_bin()) + " doctor --bogus 2>/dev/null").status, 2);
  // The neighbour: without a cap, the kernel's ABI is in use.
  Output plain = run("env -u OISHELL_LANDLOCK_ABI " + std::string(oishell_bin()) + " doctor --json 2>/dev/null");
  auto j = nlohmann::json::parse(plain.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << plain.out;
  EXPECT_EQ(j["kernel"]["landlock"]["in_use"], landlock_abi_version());
  EXPECT_TRUE(j["kernel"]["landlock"]["cap"].is_null());
}

// A sandbox whose policy says `landlock: required` starts at every ABI (every guarantee is held) and says which
// ABI it uses; a malformed cap stops it before anything is built.
TEST(Doctor, RunStartsAtEveryAbiAndRefusesABadCap) {
  for (int cap : {0, 3, 7}) {
    std::string cmd = "OISHELL_LANDLOCK_ABI=" + std::to_string(cap) + " " + oishell_bin() +
                      " run --events /dev/stdout -- /bin/true 2>&1";
    Output o = run(cmd);
    EXPECT_EQ(o.status, 0) << o.out;
    const int in_use = std::min(cap, landlock_abi_version());
    EXPECT_NE(o.out.find(in_use == 0 ? "\"landlock: none" : "\"landlock: ABI " + std::to_string(in_use)),
              std::string::npos)
        << o.out;
    EXPECT_NE(o.out.find("\"guarantees: 15 of 15 held"), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find("oishell: degraded"), std::string::npos) << o.out;  // a layer fewer is not a degradation
  }
  Output bad = run("OISHELL_LANDLOCK_ABI=x " + std::string(oishell_bin()) + " run -- /bin/true 2>&1");
  EXPECT_EQ(bad.status, 126) << bad.out;
  EXPECT_NE(bad.out.find("OISHELL_LANDLOCK_ABI=x: not a Landlock ABI from 0 to 7"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace oishell::test

namespace oishell::test {
namespace {

// `oishell explain` says which layers hold each guarantee here, at the ABI in use.
TEST(Explain, SaysWhichLayersHoldEachGuaranteeHere) {
  const int kernel = landlock_abi_version();
  Output capped = run("OISHELL_LANDLOCK_ABI=3 " + std::string(oishell_bin()) + " explain --profile default 2>&1");
  EXPECT_EQ(capped.status, 0) << capped.out;
  EXPECT_NE(capped.out.find("Guarantees here, with Landlock ABI " + std::to_string(std::min(3, kernel))),
            std::string::npos)
      << capped.out;
  EXPECT_NE(capped.out.find("    Not by Landlock TCP port rules: needs Landlock ABI 4 (Linux 6.7)"), std::string::npos)
      << capped.out;
  EXPECT_EQ(capped.out.find("LOST"), std::string::npos) << capped.out;
  Output full = run("OISHELL_LANDLOCK_ABI=7 " + std::string(oishell_bin()) + " explain --profile default 2>&1");
  EXPECT_EQ(full.status, 0) << full.out;
  EXPECT_EQ(full.out.find("Not by Landlock TCP port rules") == std::string::npos, kernel >= 4) << full.out;
}

}  // namespace
}  // namespace oishell::test
