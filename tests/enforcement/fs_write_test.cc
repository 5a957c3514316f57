// Writes outside the writable paths fail. Read-only mounts (every system bind, /proc, the root) answer EROFS before
// Landlock is asked (the VFS checks the mount's read-only flag first), so these outcomes hold at every Landlock ABI.
#include <unistd.h>

#include <gtest/gtest.h>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

TEST(WriteOutside, WriteExistingFile) {
  SandboxWorkspace w;
  EXPECT_EQ("ok", probe_on_host({"write", w.ro() + "/file", "x"}));
  EXPECT_EQ("EROFS", w.probe({"write", w.ro() + "/file", "x"}));
  EXPECT_EQ("ok", w.probe({"write", w.ws() + "/public.txt", "x"}));
}

TEST(WriteOutside, Truncate) {
  SandboxWorkspace w;
  // For an ordinary caller ro/file is its own: truncate(2) passes the permission check and meets the read-only
  // mount, EROFS. For a root caller ro/ is root's and not id-mapped (runtime/outside/idmapped_binds.h), so the
  // sandbox is "other" there, without write permission as well; which of the two refusals truncate(2) reports
  // first is the kernel's order (6.18: the permission, EACCES; Debian's 6.1: the mount, EROFS). Either way the
  // file is as it was.
  const std::string refused = w.probe({"truncate", w.ro() + "/file"});
  if (::geteuid() == 0) {
    EXPECT_TRUE(refused == "EACCES" || refused == "EROFS") << refused;
  } else {
    EXPECT_EQ("EROFS", refused);
  }
  EXPECT_EQ("EROFS", w.probe({"open", w.ro() + "/file", "trunc"}));
  EXPECT_EQ("read-only\n", SandboxWorkspace::read(w.ro() + "/file"));
  EXPECT_EQ("ok", w.probe({"truncate", w.ws() + "/public.txt"}));
  EXPECT_EQ("", SandboxWorkspace::read(w.ws() + "/public.txt"));
}

TEST(WriteOutside, Rename) {
  SandboxWorkspace w;
  EXPECT_EQ("EROFS", w.probe({"rename", w.ro() + "/file", w.ro() + "/renamed"}));
  EXPECT_EQ("ok", w.probe({"rename", w.ws() + "/public.txt", w.ws() + "/renamed"}));
}

TEST(WriteOutside, Chmod) {
  SandboxWorkspace w;
  EXPECT_EQ("EROFS", w.probe({"chmod", w.ro() + "/file", "777"}));
  EXPECT_EQ("ok", w.probe({"chmod", w.ws() + "/public.txt", "600"}));
}

TEST(WriteOutside, Delete) {
  SandboxWorkspace w;
  EXPECT_EQ("EROFS", w.probe({"unlink", w.ro() + "/file"}));
  EXPECT_EQ("ok", w.probe({"unlink", w.ws() + "/public.txt"}));
}

TEST(WriteOutside, Create) {
  SandboxWorkspace w;
  EXPECT_EQ("EROFS", w.probe({"open", w.ro() + "/new", "create"}));
  EXPECT_EQ("EROFS", w.probe({"mkdir", w.ro() + "/newdir"}));
  EXPECT_EQ("ok", w.probe({"open", w.ws() + "/new", "create"}));
  EXPECT_EQ("ok", w.probe({"mkdir", w.ws() + "/newdir"}));
}

TEST(WriteOutside, SystemDirsAndRoot) {
  SandboxWorkspace w;
  EXPECT_EQ("EROFS", w.probe({"open", "/usr/oishell-test", "create"}));
  EXPECT_EQ("EROFS", w.probe({"write", "/etc/hostname", "x"}));
  // The new root is a read-only tmpfs: nothing can be added beside the policy's paths.
  EXPECT_EQ("EROFS", w.probe({"open", "/oishell-test", "create"}));
  EXPECT_EQ("ok", w.probe({"open", "/tmp/oishell-test", "create"}));
}

TEST(WriteOutside, ProcIsReadOnly) {
  SandboxWorkspace w;
  // /proc is mounted read-only, which the kernel checks before Landlock's read-only rule for it (ABI 1 and up):
  // EROFS at every ABI. tests/enforcement/landlock_inprocess_test.cc shows the rule itself.
  EXPECT_EQ("EROFS", w.probe({"write", "/proc/self/comm", "x"}));
  EXPECT_EQ("ok", w.probe({"open", "/proc/self/comm", "r"}));
}

TEST(WriteOutside, HostPathsOutsideThePolicyDoNotExist) {
  SandboxWorkspace w;
  EXPECT_EQ("outside", probe_on_host({"cat", w.outside() + "/file"}));
  EXPECT_EQ("ENOENT", w.probe({"cat", w.outside() + "/file"}));
}

}  // namespace
}  // namespace oishell::test
