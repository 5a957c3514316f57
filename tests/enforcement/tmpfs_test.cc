// Every tmpfs in the sandbox has a size: /tmp, the home and /dev/shm share one tmpfs of three quarters of the
// memory limit, with or without cgroups. Without it (before), 3 GiB went into /tmp under a 1 GiB limit when no
// cgroup was writable (any ordinary user here): host memory, not the sandbox's, ran out.
#include <string>

#include <gtest/gtest.h>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

SandboxRun run_script(const SandboxWorkspace& w, const std::string& script) {
  return run_sandboxed(w.args({"--memory", "64MiB"}), {"/bin/sh", "-c", script});
}

TEST(Tmpfs, TmpHomeAndShmTogetherStayWithinTheMemoryLimit) {
  SandboxWorkspace w;
  // 48 MiB (3/4 of 64 MiB) for all three together: 20 + 20 fits, the next 20 does not.
  SandboxRun r = run_script(w,
                            "head -c 20M /dev/zero > /tmp/a && echo tmp-ok; "
                            "head -c 20M /dev/zero > \"$HOME/b\" && echo home-ok; "
                            "head -c 20M /dev/zero > /dev/shm/c && echo shm-ok || echo shm-full; "
                            "df -k /tmp | tail -1");
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("tmp-ok")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("home-ok")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("shm-full")) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.err.find("No space left on device")) << r.err;  // ENOSPC, not a kill
  EXPECT_NE(std::string::npos, r.out.find(" 49152 ")) << r.out;                 // df: 48 MiB in all
}

TEST(Tmpfs, FilesAreCountedToo) {
  SandboxWorkspace w;
  // 8192 inodes at this size: a thousand files fit, ten thousand do not (each costs kernel memory too).
  SandboxRun r = run_script(w,
                            "cd /tmp && i=0; while [ $i -lt 1000 ]; do printf '' > f$i; i=$((i+1)); done; echo thousand-ok; "
                            "while [ $i -lt 10000 ]; do printf '' > f$i 2>/dev/null || break; i=$((i+1)); done; echo made=$i");
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("thousand-ok")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("made=10000")) << r.out;
}

TEST(Tmpfs, NothingCanBeCreatedInDevOrTheRoot) {
  SandboxWorkspace w;
  SandboxRun r = run_script(w, "printf '' > /dev/planted && echo dev-ok || echo dev-refused; "
                               "printf '' > /dev/shm/ok && echo shm-ok");
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("dev-refused")) << r.out;  // read-only once complete (was a 64k tmpfs)
  EXPECT_NE(std::string::npos, r.out.find("shm-ok")) << r.out;       // shm_open's directory works
}

TEST(Tmpfs, TheRunSaysHowTmpfsIsBounded) {
  SandboxWorkspace w;
  std::string events = w.path("events.jsonl");
  SandboxRun r = run_sandboxed(w.args({"--memory", "64MiB", "--events", events}), {"/bin/true"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, SandboxWorkspace::read(events).find("tmpfs: /tmp, the home and /dev/shm share 48 MiB"))
      << SandboxWorkspace::read(events);
}

}  // namespace
}  // namespace oishell::test
