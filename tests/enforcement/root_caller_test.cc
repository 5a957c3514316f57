// Started by root, the sandbox is root inside but an unused id outside (runtime/inside/userns.h): root-only files in the
// bound system directories and /proc are read as "other", while the workspace (id-mapped) stays root's as before.
// Before, uid 0 was mapped to 0 and owner bits applied: /etc/ssl/private, keytabs, NetworkManager connections,
// /etc/sudoers and root-only /proc files were readable from inside.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

class RootCaller : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "the root caller's guarantee: as an ordinary user these files are unreadable without the "
                      "sandbox too";
    }
  }
};

TEST_F(RootCaller, RootOnlyHostFilesAreUnreadable) {
  SandboxWorkspace w;
  EtcFile owner_only(0600), group_root(0640), everyone(0644);
  ASSERT_EQ("ok", probe_on_host({"open", owner_only.path(), "r"}));  // root reads it without the sandbox
  EXPECT_EQ("EACCES", w.probe({"open", owner_only.path(), "r"}));
  EXPECT_EQ("EACCES", w.probe({"open", group_root.path(), "r"}));  // root's groups are gone too
  EXPECT_EQ("EACCES", w.probe({"open", "/proc/sys/kernel/cad_pid", "r"}));  // 0600 root in /proc
  // The neighbours: what "other" may read.
  EXPECT_EQ("ok", w.probe({"open", everyone.path(), "r"}));
  EXPECT_EQ("ok", w.probe({"open", "/proc/sys/kernel/hostname", "r"}));
}

TEST_F(RootCaller, TheWorkspaceIsStillRootsToReadAndWrite) {
  SandboxWorkspace w;
  std::string secret = w.ws() + "/root-only.txt";
  int fd = ::open(secret.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  (void)!::write(fd, "mine\n", 5);
  ::close(fd);
  SandboxRun r = run_sandboxed(w.args(), {"/bin/sh", "-c", "id -u; cat " + secret + "; echo more >> " + secret +
                                                               " && echo made > " + w.ws() + "/created.txt"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ("0\nmine\n", r.out);  // root inside, owner of the workspace's root-owned files
  struct stat st;
  ASSERT_EQ(0, ::stat((w.ws() + "/created.txt").c_str(), &st));
  EXPECT_EQ(0u, st.st_uid);  // created as root on the host, as before
  EXPECT_EQ(0u, st.st_gid);
  EXPECT_EQ("mine\nmore\n", SandboxWorkspace::read(secret));
}

}  // namespace
}  // namespace oishell::test
