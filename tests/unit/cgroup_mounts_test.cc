// The cgroup mount facts `oishell doctor` reads from /proc/self/mountinfo, and the start-up advice it gives with
// them (tools/oishell/doctor_assess.h): init's move into its cgroups waits for an RCU grace period unless a
// hierarchy is mounted with favordynmods (docs/performance.md).
#include <gtest/gtest.h>

#include "runtime/outside/cgroup_fs.h"
#include "tools/oishell/doctor_assess.h"

namespace oishell {
namespace {

// As on this project's machines: memory and pids on cgroup v1, a cgroup2 hierarchy with hugetlb only.
constexpr const char* kMixed =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

TEST(CgroupMounts, FindsAMountPointCgroup2First) {
  const auto mounts = cgroup::cgroup_mounts(kMixed);
  EXPECT_FALSE(mounts.favordynmods);
  EXPECT_EQ(mounts.mount_point, "/sys/fs/cgroup/unified");
  const auto v1_only = cgroup::cgroup_mounts("35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
  EXPECT_EQ(v1_only.mount_point, "/sys/fs/cgroup/memory");
  EXPECT_EQ(cgroup::cgroup_mounts("31 23 0:28 / /tmp rw - tmpfs tmpfs rw\n").mount_point, "");
}

TEST(CgroupMounts, FavordynmodsOnAnyHierarchyCounts) {
  EXPECT_TRUE(cgroup::cgroup_mounts(std::string(kMixed) +
                                    "50 31 0:40 / /sys/fs/cgroup/x rw - cgroup cgroup rw,favordynmods,cpu\n")
                  .favordynmods);
  EXPECT_TRUE(cgroup::cgroup_mounts("41 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw,nsdelegate,"
                                    "favordynmods,memory_recursiveprot\n")
                  .favordynmods);
  // The word in a mount's own options or its path is not the hierarchy's option.
  EXPECT_FALSE(cgroup::cgroup_mounts("41 31 0:38 / /favordynmods rw,favordynmods - cgroup2 cgroup2 rw\n").favordynmods);
  EXPECT_FALSE(cgroup::cgroup_mounts("41 31 0:38 / /x rw - tmpfs tmpfs rw,favordynmods\n").favordynmods);
}

TEST(StartupAdvice, OnlyWhenCgroupsAreUsedWithoutFavordynmods) {
  KernelFacts k;
  k.cgroup_mount_point = "/sys/fs/cgroup/unified";
  const std::vector<std::string> by_cgroup = {"memory: cgroup v1 /sys/fs/cgroup/memory/oishell-1-0 (2 GiB)"};
  const std::string advice = cli::startup_advice(k, by_cgroup);
  EXPECT_NE(advice.find("RCU grace period"), std::string::npos) << advice;
  EXPECT_NE(advice.find("`mount -o remount,favordynmods /sys/fs/cgroup/unified`"), std::string::npos) << advice;
  // Its neighbours: with favordynmods, or with rlimits only (an ordinary user without delegation), nothing to say.
  k.cgroup_favordynmods = true;
  EXPECT_EQ(cli::startup_advice(k, by_cgroup), "");
  k.cgroup_favordynmods = false;
  EXPECT_EQ(cli::startup_advice(k, {"memory: rlimit RLIMIT_AS (2 GiB of address space per process)"}), "");
  // Init born in its cgroup v2 group (clone3 CLONE_INTO_CGROUP) is never moved: nothing to say; cloned and moved
  // into the same group, the advice stands.
  const std::vector<std::string> by_v2 = {"memory: cgroup v2 /sys/fs/cgroup/system.slice/oishell-1-0 (2 GiB)"};
  EXPECT_EQ(cli::startup_advice(k, by_v2, /*init_born=*/true), "");
  EXPECT_NE(cli::startup_advice(k, by_v2, /*init_born=*/false).find("RCU grace period"), std::string::npos);
}

}  // namespace
}  // namespace oishell
