// Limits end to end: a memory hog and a fork bomb inside `oishell run` are bounded. Where a delegated cgroup v2
// subtree passes memory and pids down they are cgroup v2 limits, else where writable cgroup v1 limits (root here:
// this machine has only hugetlb on v2); either way the hog is killed and oishell says "killed: memory limit
// 64 MiB". Without either (an ordinary user here) they are RLIMIT_AS (allocation fails) and RLIMIT_NPROC counted
// in the sandbox's own user namespace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "harness.h"
#include "runtime/outside/cgroup_fs.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

// Whether `oishell run` (a child of this process, in its cgroups) limits memory with a cgroup: v2 when a delegated
// directory passes memory and pids down (the policy limits both), else v1 when its memory hierarchy is writable.
bool memory_by_cgroup() {
  const cgroup::OwnCgroups own = cgroup::OwnCgroups::read();
  if (cgroup::find_v2_parent(own, {"memory", "pids"}).is_ok()) return true;
  auto dir = own.v1_dir("memory");
  return dir && ::access(dir->c_str(), W_OK) == 0;
}

TEST(LimitsSandbox, MemoryHogIsBounded) {
  SandboxWorkspace w;
  std::vector<std::string> cmd = {probe_bin(), "memhog", "512"};
  SandboxRun run = run_sandboxed(w.args({"--memory", "64MiB"}), cmd);
  if (memory_by_cgroup()) {
    EXPECT_EQ(run.status, 128 + 9) << run.out << run.err;
    EXPECT_NE(run.err.find("killed: memory limit 64 MiB"), std::string::npos) << run.err;
  } else {
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out.rfind("ENOMEM after ", 0), 0u) << run.out;
  }
  EXPECT_EQ("ok", w.probe({"memhog", "32"}, {"--memory", "256MiB"}));  // the neighbour: under the limit
}

TEST(LimitsSandbox, ForkBombIsBounded) {
  SandboxWorkspace w;
  std::string policy = w.path("pids.yaml");
  std::ofstream(policy) << "version: 1\nextends: " << w.policy() << "\nlimits:\n  pids: 32\n";
  std::vector<std::string> args = {"--policy", policy, "--workspace", w.ws()};
  std::string out = probe(args, {"forkbomb", "500"});
  ASSERT_EQ(out.rfind("EAGAIN after ", 0), 0u) << out;
  EXPECT_LT(std::stoi(out.substr(13)), 32) << out;
  EXPECT_EQ("ok", probe(args, {"forkbomb", "8"}));  // the neighbour: a few children are fine
}

}  // namespace
}  // namespace oishell::test
