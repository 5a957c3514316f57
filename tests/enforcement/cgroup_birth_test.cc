// Sandbox init born in its cgroup (runtime/outside/cgroup_birth.h). Where cgroup v2 gives this process a subtree
// that passes memory and pids down (root on a systemd host, a user in its user@UID.service), the group is made
// first and init is cloned straight into it with clone3(CLONE_INTO_CGROUP): the group's cgroup.procs holds init the
// moment the clone returns, before init has reported anything and before any supervisor code could have written a
// cgroup.procs (no move ever happens). Elsewhere, as on the development machine (memory and pids on cgroup v1,
// only hugetlb on v2), init is cloned and moved as before, and the reason is asserted word for word.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "harness.h"
#include "runtime/outside/cgroup_birth.h"
#include "runtime/outside/cgroup_fs.h"
#include "runtime/outside/init_process.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CgroupBirth, InitIsBornInItsGroupOrTheFallbackSaysWhy) {
  const cgroup::OwnCgroups own = cgroup::OwnCgroups::read();
  const auto parent = cgroup::find_v2_parent(own, birth_controllers());
  auto init = InitProcess::clone(own);
  ASSERT_TRUE(init.is_ok()) << init.status().message();
  const pid_t pid = init->pid();
  if (!parent.is_ok()) {
    // No delegated v2 subtree passes memory and pids down: the clone-then-move start, and exactly why.
    EXPECT_FALSE(init->born_in_cgroup());
    EXPECT_EQ(init->cgroup_dir(), "");
    EXPECT_EQ(init->start_note(), "init cloned, then moved into its cgroups: cgroup v2: " + parent.status().message());
    // In words of this machine's two cases: root sees a v2 hierarchy without the controllers, a user one that is
    // not delegated to it.
    const std::string note = init->start_note();
    EXPECT_TRUE(note.find("offers no memory, pids controller") != std::string::npos ||
                note.find("not delegated to this process") != std::string::npos ||
                note.find("cgroup v2: not mounted") != std::string::npos)
        << note;
    std::printf("[   NOTE   ] %s\n", note.c_str());
    return;
  }
  ASSERT_TRUE(init->born_in_cgroup()) << init->start_note();
  const std::string dir = init->cgroup_dir();
  ASSERT_EQ(dir.rfind(parent->dir + "/oishell-", 0), 0u) << dir;
  EXPECT_EQ(init->start_note(), "init born in its cgroup " + dir + " (clone3 CLONE_INTO_CGROUP, no migration)");
  // Init waits for the policy; nothing has written any cgroup.procs since the clone, and init is in its group.
  EXPECT_EQ(read_text(dir + "/cgroup.procs"), std::to_string(pid) + "\n");
  const std::string top = *own.v2_mount_point();
  EXPECT_EQ(read_text("/proc/" + std::to_string(pid) + "/cgroup"), "0::" + dir.substr(top.size()) + "\n");
  // Born limit-less: the limits are the supervisor's to write, while init builds its mount tree.
  EXPECT_EQ(read_text(dir + "/memory.max"), "max\n");
  EXPECT_EQ(read_text(dir + "/pids.max"), "max\n");
  // The neighbour: our own cgroup never held init (it is not among its members now either).
  EXPECT_EQ(read_text(*own.v2_dir() + "/cgroup.procs").find(std::to_string(pid) + "\n"), std::string::npos);
  // An init never handed to a sandbox is killed, and its group removed with it.
  init = InitProcess{};
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

// Whether a sandbox of `oishell run` (a child of this process) limits memory with a cgroup (as in
// limits_sandbox_test.cc): v2 where a delegated subtree passes memory and pids down, else a writable v1 memory.
bool memory_by_cgroup() {
  const cgroup::OwnCgroups own = cgroup::OwnCgroups::read();
  if (cgroup::find_v2_parent(own, birth_controllers()).is_ok()) return true;
  auto dir = own.v1_dir("memory");
  return dir && ::access(dir->c_str(), W_OK) == 0;
}

// The `start` event of `oishell run` says how init started; the limits hold in either start, and hold in the
// group init was born in: a memory hog is killed inside (64 MiB), a fork bomb stopped (32 pids); their
// neighbours, under the limits, run.
TEST(CgroupBirth, TheStartIsSaidAndTheLimitsHold) {
  SandboxWorkspace w;
  const std::string policy = w.path("limits.yaml");
  std::ofstream(policy) << "version: 1\nextends: " << w.policy() << "\nlimits:\n  memory: 64MiB\n  pids: 32\n";
  const std::string events = w.path("events.jsonl");
  std::vector<std::string> args = {"--policy", policy, "--workspace", w.ws(), "--ro", w.ro(), "--events", events};

  SandboxRun hog = run_sandboxed(args, {probe_bin(), "memhog", "512"});
  const std::string log = read_text(events);
  const bool v2_birth = cgroup::find_v2_parent(cgroup::OwnCgroups::read(), birth_controllers()).is_ok();
  const std::string said = v2_birth ? "\"start: init born in its cgroup " : "\"start: init cloned, then moved into";
  EXPECT_NE(log.find(said), std::string::npos) << log;
  if (memory_by_cgroup()) {
    EXPECT_EQ(hog.status, 128 + 9) << hog.out << hog.err;
    EXPECT_NE(hog.err.find("killed: memory limit 64 MiB"), std::string::npos) << hog.err;
  } else {
    EXPECT_EQ(hog.status, 0) << hog.err;
    EXPECT_EQ(hog.out.rfind("ENOMEM after ", 0), 0u) << hog.out;
  }
  std::vector<std::string> quiet = {"--policy", policy, "--workspace", w.ws(), "--ro", w.ro()};
  const std::string bomb = probe(quiet, {"forkbomb", "500"});
  ASSERT_EQ(bomb.rfind("EAGAIN after ", 0), 0u) << bomb;
  EXPECT_LT(std::stoi(bomb.substr(13)), 32) << bomb;
  EXPECT_EQ("ok", probe(quiet, {"memhog", "16"}));  // the neighbours: under the limits
  EXPECT_EQ("ok", probe(quiet, {"forkbomb", "8"}));
}

}  // namespace
}  // namespace oishell::test
