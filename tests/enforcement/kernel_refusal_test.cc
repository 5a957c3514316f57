// On a kernel where oishell builds no sandbox at all, nothing of this suite can run: before Linux 5.12 (Debian 11's
// 5.10) there is no mount_setattr, so no bind can be made read-only, nosuid or nodev and no tree id-mapped
// (docs/kernels.md). There the suite runs only KernelRefusal.*, which asserts that `oishell run` refuses with status
// 126 and the words that name the missing call (or, for an ordinary user where user namespaces are off, the sysctl
// that comes first), and says loudly that every other case is left out. Elsewhere it asserts the neighbour: the
// default sandbox starts. This file holds the suite's main.
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "harness.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

namespace oishell::test {
namespace {

bool kernel_has_mount_setattr() {
  // Bad arguments on purpose: a kernel with the call answers EBADF or EINVAL, one without it ENOSYS.
  return !(::syscall(SYS_mount_setattr, -1, "", 0, nullptr, 0) < 0 && errno == ENOSYS);
}

// Whether this caller may make a user namespace (in a child: the test process keeps its own).
bool may_make_user_namespace() {
  pid_t pid = ::fork();
  if (pid == 0) _exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The refusal on a kernel without mount_setattr, or its neighbour elsewhere: oishell builds the default sandbox.
TEST(KernelRefusal, WithoutMountSetattrOishellRefusesNamingIt) {
  std::string out;
  FILE* p = ::popen((std::string(oishell_bin()) + " run -- /bin/true 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = ::pclose(p);
  ASSERT_TRUE(WIFEXITED(st)) << out;
  if (kernel_has_mount_setattr()) {
    EXPECT_EQ(WEXITSTATUS(st), 0) << out;
    return;
  }
  EXPECT_EQ(WEXITSTATUS(st), 126) << out;
  const bool root = ::geteuid() == 0;
  const std::string words = !root && !may_make_user_namespace()
                                ? "sysctl -w kernel.unprivileged_userns_clone=1"
                            : root ? "this kernel has no id-mapped mounts (Linux 5.12)"
                                   : "this kernel has no mount_setattr (Linux 5.12 and later have it)";
  EXPECT_NE(out.find(words), std::string::npos) << out;
}

}  // namespace
}  // namespace oishell::test

// The suite's main: on a kernel without mount_setattr only the refusal above runs, and the suite says loudly why
// every other case is left out (each would fail on the same refusal).
int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (!oishell::test::kernel_has_mount_setattr()) {
    utsname u{};
    ::uname(&u);
    std::fprintf(stderr,
                 "oishell_enforcement_tests: Linux %s has no mount_setattr (5.12): oishell builds no sandbox here; "
                 "only KernelRefusal.* runs, every other case is left out\n",
                 u.release);
    testing::GTEST_FLAG(filter) = "KernelRefusal.*";
  }
  return RUN_ALL_TESTS();
}
