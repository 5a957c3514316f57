// Resource limits in-process: a memory hog and a fork bomb are bounded, file size, open files and cpu time are
// capped, and teardown leaves no process and no cgroup. Memory and pids go to a cgroup v2 group where a delegated
// subtree passes those controllers down (a systemd user session's user@UID.service), else to cgroup v1 where
// writable (root here: this machine has only hugetlb on v2), and in either case the hog is OOM-killed and
// kill_reason() names the limit; else (an ordinary user here) they fall back to RLIMIT_AS (allocation fails with
// ENOMEM) and RLIMIT_NPROC (fork fails with EAGAIN). Each branch asserts its exact outcome and the mechanism named.
// The v2 choice itself is tested against a fake tree in tests/unit/cgroup_v2_test.cc.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/outside/cgroup_fs.h"
#include "runtime/outside/limits.h"
#include "seal_child.h"

namespace oishell::test {
namespace {

// The mechanism prepare() must choose for a spec limiting `controller` alone, as this process finds its cgroups:
// "cgroup v2" (a delegated v2 directory passes it down), "cgroup v1" (its v1 hierarchy is writable) or "rlimit".
std::string expected_mechanism(const std::string& controller) {
  const cgroup::OwnCgroups own = cgroup::OwnCgroups::read();
  if (cgroup::find_v2_parent(own, {controller}).is_ok()) return "cgroup v2";
  auto dir = own.v1_dir(controller);
  return dir && ::access(dir->c_str(), W_OK) == 0 ? "cgroup v1" : "rlimit";
}

// In the child: prepares the limits, starts `work` in a grandchild that waits until it is in the cgroups and has
// its rlimits, then reports the grandchild's status, the kill reason and the mechanisms, and tears down.
int run_limited(const Child& c, const LimitsSpec& spec, const std::function<void()>& work) {
  auto limits = ResourceLimits::prepare(spec);
  if (!limits) {
    c.report("prepare", limits.status().message());
    return 1;
  }
  for (const auto& m : (*limits)->mechanisms()) c.report("mechanism." + m.substr(0, m.find(':')), m);
  int go[2];
  if (::pipe2(go, O_CLOEXEC) != 0) return 1;
  pid_t pid = ::fork();
  if (pid == 0) {
    char b;
    if (::read(go[0], &b, 1) != 1) ::_exit(3);
    Status s = (*limits)->apply_rlimits();
    c.report("apply_rlimits", s ? "ok" : s.message());
    if (!s) ::_exit(4);
    work();
    ::_exit(0);
  }
  Status added = (*limits)->add_process(pid);
  c.report("add_process", added ? "ok" : added.message());
  [[maybe_unused]] ssize_t n = ::write(go[1], "g", 1);
  int st = 0;
  ::waitpid(pid, &st, 0);
  c.report("status", WIFEXITED(st) ? std::to_string(WEXITSTATUS(st)) : "signal " + std::to_string(WTERMSIG(st)));
  c.report("kill_reason", (*limits)->kill_reason());
  (*limits)->teardown();
  return 0;
}

TEST(LimitsInProcess, MemoryHogIsBounded) {
  const std::string mechanism = expected_mechanism("memory");
  const bool cgroup = mechanism != "rlimit";
  LimitsSpec spec;
  spec.memory_bytes = 64ULL << 20;
  ChildReport r = run_in_child([&](const Child& c) {
    return run_limited(c, spec, [&] {
      // Touch 8 MiB chunks up to 512 MiB; without a limit this succeeds.
      size_t mib = 0;
      for (; mib < 512; mib += 8) {
        void* p = std::malloc(8u << 20);
        if (p == nullptr) {
          c.report("alloc", "ENOMEM");
          break;
        }
        std::memset(p, 1, 8u << 20);
        c.report("allocated_mib", std::to_string(mib + 8));
      }
      if (mib >= 512) c.report("alloc", "all 512 MiB");
    });
  });
  ASSERT_EQ(r.at("add_process"), "ok") << r.log;
  EXPECT_EQ(r.at("apply_rlimits"), "ok") << r.log;
  if (cgroup) {
    EXPECT_EQ(r.at("mechanism.memory").rfind("memory: " + mechanism + " /", 0), 0u) << r.log;
    EXPECT_EQ(r.at("status"), "signal 9") << r.log;  // OOM-killed inside its cgroup
    EXPECT_EQ(r.at("kill_reason"), "memory limit 64 MiB") << r.log;
  } else {
    EXPECT_EQ(r.at("mechanism.memory").rfind("memory: rlimit RLIMIT_AS", 0), 0u) << r.log;
    EXPECT_EQ(r.at("alloc"), "ENOMEM") << r.log;
    EXPECT_EQ(r.at("status"), "0") << r.log;
    EXPECT_EQ(r.at("kill_reason"), "") << r.log;
  }
  EXPECT_LE(std::stoi(r.values.count("allocated_mib") ? r.at("allocated_mib") : "0"), 64) << r.log;
}

TEST(LimitsInProcess, ForkBombIsBounded) {
  const std::string mechanism = expected_mechanism("pids");
  LimitsSpec spec;
  spec.pids = 16;
  ChildReport r = run_in_child([&](const Child& c) {
    return run_limited(c, spec, [&] {
      std::vector<pid_t> kids;
      for (int i = 0; i < 200; ++i) {
        pid_t p = ::fork();
        if (p == 0) {
          ::pause();
          ::_exit(0);
        }
        if (p < 0) {
          c.report("fork", errno_result(-1));
          break;
        }
        kids.push_back(p);
      }
      c.report("forked", std::to_string(kids.size()));
      for (pid_t k : kids) ::kill(k, SIGKILL);
      for (pid_t k : kids) ::waitpid(k, nullptr, 0);
    });
  });
  ASSERT_EQ(r.at("add_process"), "ok") << r.log;
  EXPECT_EQ(r.at("mechanism.pids").rfind(mechanism == "rlimit" ? "pids: rlimit RLIMIT_NPROC (16 "
                                                                : "pids: " + mechanism + " /",
                                         0),
            0u)
      << r.log;
  EXPECT_EQ(r.at("fork"), "EAGAIN") << r.log;  // without a limit: 200 forks succeed
  EXPECT_LT(std::stoi(r.at("forked")), 16) << r.log;
  EXPECT_EQ(r.at("status"), "0") << r.log;
}

TEST(LimitsInProcess, FileSizeOpenFilesAndCpuTime) {
  std::string dir = (std::filesystem::temp_directory_path() / "oishell-limits-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  LimitsSpec spec;
  spec.file_size_bytes = 1 << 20;
  spec.open_files = 32;
  ChildReport r = run_in_child([&](const Child& c) {
    return run_limited(c, spec, [&] {
      ::signal(SIGXFSZ, SIG_IGN);
      int fd = ::open((dir + "/f").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      std::string half(512 << 10, 'x');
      c.result("write_first_half", ::write(fd, half.data(), half.size()));
      c.result("write_second_half", ::write(fd, half.data(), half.size()));
      c.result("write_beyond", ::write(fd, half.data(), 1));
      ::close(fd);
      long last = 0;
      for (int i = 0; i < 64 && last >= 0; ++i) last = ::open("/dev/null", O_RDONLY);  // leaked on purpose
      c.result("open_many", last);
    });
  });
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.at("write_first_half"), "ok") << r.log;
  EXPECT_EQ(r.at("write_second_half"), "ok") << r.log;
  EXPECT_EQ(r.at("write_beyond"), "EFBIG") << r.log;  // without the limit: ok
  EXPECT_EQ(r.at("open_many"), "EMFILE") << r.log;
  EXPECT_EQ(r.at("mechanism.file size"), "file size: rlimit RLIMIT_FSIZE (1 MiB)");
  EXPECT_EQ(r.at("mechanism.open files"), "open files: rlimit RLIMIT_NOFILE (32)");

  LimitsSpec cpu;
  cpu.cpu_time_seconds = 1;
  r = run_in_child([&](const Child& c) {
    return run_limited(c, cpu, [] {
      for (unsigned long i = 0;; ++i) asm volatile("" : "+r"(i));  // spin on the cpu
    });
  });
  EXPECT_EQ(r.at("status"), "signal " + std::to_string(SIGXCPU)) << r.log;
  EXPECT_EQ(r.at("kill_reason"), "") << r.log;
}

TEST(LimitsInProcess, TeardownKillsLeftoversAndRemovesTheCgroups) {
  const std::string mechanism = expected_mechanism("pids");
  if (mechanism == "rlimit") {
    // rlimits only: nothing to tear down; the neighbour check is that prepare() made no cgroup at all.
    auto limits = ResourceLimits::prepare(LimitsSpec{.pids = 8});
    ASSERT_TRUE(limits.is_ok());
    EXPECT_TRUE((*limits)->cgroup_dirs().empty());
    for (const auto& m : (*limits)->mechanisms()) {
      EXPECT_EQ(m.find("cgroup v1 /"), std::string::npos) << m;
      EXPECT_EQ(m.find("cgroup v2 /"), std::string::npos) << m;
    }
    return;
  }
  LimitsSpec spec;
  spec.pids = 8;
  auto limits = ResourceLimits::prepare(spec);
  ASSERT_TRUE(limits.is_ok());
  std::string mech = (*limits)->mechanisms().at(0);
  ASSERT_EQ(mech.rfind("pids: " + mechanism + " /", 0), 0u) << mech;
  std::string path = mech.substr(mech.find('/'), mech.find(" (") - mech.find('/'));
  ASSERT_TRUE(std::filesystem::exists(path)) << mech;
  EXPECT_EQ((std::vector<std::string>{path}), (*limits)->cgroup_dirs());
  int ready[2], go[2];
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    char g;
    if (::read(go[0], &g, 1) != 1) ::_exit(1);  // forks only once it is in the cgroup
    if (::fork() == 0) {  // a daemonised grandchild that would outlive its parent
      ::setsid();
      [[maybe_unused]] ssize_t n = ::write(ready[1], "r", 1);
      for (;;) ::pause();
    }
    ::_exit(0);
  }
  ASSERT_TRUE((*limits)->add_process(pid).is_ok());
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  ::close(go[0]);
  ::close(go[1]);
  ::close(ready[1]);
  char b;
  ASSERT_EQ(::read(ready[0], &b, 1), 1);
  ::close(ready[0]);
  ::waitpid(pid, nullptr, 0);
  auto procs = cgroup::read_file(path + "/cgroup.procs");
  ASSERT_TRUE(procs.has_value());
  EXPECT_FALSE(procs->empty()) << "the daemonised grandchild is in the cgroup";
  (*limits)->teardown();
  EXPECT_FALSE(std::filesystem::exists(path));
  (*limits)->teardown();  // idempotent
}

}  // namespace
}  // namespace oishell::test
