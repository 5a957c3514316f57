// `oishell doctor`: its JSON names the kernel's Landlock ABI and seccomp support as this process sees them, its
// verdicts cover every security feature, and its exit status matches "enforced in full".
#include <stdio.h>
#include <sys/wait.h>

#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.h"
#include "runtime/landlock.h"

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

TEST(Doctor, JsonAgreesWithTheKernelAndTheExitStatus) {
  Output o = run(std::string(oishell_bin()) + " doctor --json 2>/dev/null");
  auto j = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << o.out;
  EXPECT_EQ(j["kernel"]["landlock"]["abi"], landlock_abi_version());
  std::set<std::string> names;
  for (const auto& f : j["default_profile"]["features"]) names.insert(f["name"].get<std::string>());
  for (const char* n : {"namespaces", "landlock.filesystem", "landlock.tcp", "landlock.scopes", "capabilities",
                        "seccomp", "seccomp.reports", "terminal_injection", "network", "limits.memory",
                        "limits.pids"}) {
    EXPECT_TRUE(names.count(n)) << n << "\n" << o.out;
  }
  const bool full = j["default_profile"]["enforced_in_full"].get<bool>();
  EXPECT_EQ(o.status, full ? 0 : 1);
  // This machine (kernel 6.18, Landlock ABI 7, user namespaces on) enforces the default profile in full.
  EXPECT_TRUE(full) << o.out;

  Output text = run(std::string(oishell_bin()) + " doctor 2>&1");
  EXPECT_EQ(text.status, o.status);
  EXPECT_NE(text.out.find("The default profile is enforced in full."), std::string::npos) << text.out;
  EXPECT_EQ(run(std::string(oishell_bin()) + " doctor --bogus 2>/dev/null").status, 2);
}

}  // namespace
}  // namespace oishell::test
