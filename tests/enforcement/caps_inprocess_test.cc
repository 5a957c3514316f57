// Capabilities in-process: in a fresh user namespace (where the child holds every capability, as sandbox init
// does) drop_all_capabilities() leaves every set empty, locks the securebits, sets no_new_privs, and a capability-
// gated action that worked just before (mount, sethostname) then fails with EPERM. Exec as uid 0 regains nothing.
#include <fcntl.h>
#include <linux/securebits.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "runtime/inside/caps.h"
#include "seal_child.h"

namespace oishell::test {
namespace {

bool write_file(const std::string& path, const std::string& content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ::close(fd);
  return ok;
}

// "CapEff" -> "0000000000000000"
std::string status_field(const std::string& name) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) == 0) return line.substr(line.find_first_not_of(" \t", name.size() + 1));
  }
  return "?";
}

// Becomes uid 0 with every capability in a new user, mount and UTS namespace (works for any user here).
bool enter_userns(const Child& c) {
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS) != 0) {
    c.report("userns", "unshare: " + errno_result(-1));
    return false;
  }
  if (!write_file("/proc/self/setgroups", "deny") ||
      !write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
      !write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
    c.report("userns", "id maps: " + errno_result(-1));
    return false;
  }
  c.report("userns", "ok");
  return true;
}

TEST(CapsInProcess, DropClearsEverySetAndCapabilityActionsFail) {
  std::string dir = (std::filesystem::temp_directory_path() / "oishell-caps-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  ChildReport r = run_in_child([&](const Child& c) {
    if (!enter_userns(c)) return 1;
    c.report("capeff_before", status_field("CapEff"));
    c.result("mount_before", ::mount("none", dir.c_str(), "tmpfs", 0, nullptr));
    c.result("sethostname_before", ::sethostname("before", 6));
    Status s = drop_all_capabilities();
    c.report("drop", s ? "ok" : s.message());
    if (!s) return 1;
    for (const char* f : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) c.report(f, status_field(f));
    c.report("nnp", std::to_string(::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)));
    c.report("securebits", std::to_string(::prctl(PR_GET_SECUREBITS, 0, 0, 0, 0)));
    c.result("mount_after", ::mount("none", dir.c_str(), "tmpfs", 0, nullptr));
    c.result("sethostname_after", ::sethostname("after", 5));
    c.result("setsecurebits_after", ::prctl(PR_SET_SECUREBITS, 0, 0, 0, 0));
    c.result("chown_to_unmapped", ::chown(dir.c_str(), 12345, 12345));
    // uid 0 (in the namespace) execs a program: without SECBIT_NOROOT it would regain every capability.
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(c.report_fd(), 3);
      execl("/bin/sh", "sh", "-c", "echo capeff_exec=$(sed -n 's/^CapEff:\\t//p' /proc/self/status) >&3", nullptr);
      ::_exit(127);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    c.report("exec_status", std::to_string(st));
    return 0;
  });
  std::filesystem::remove(dir);
  ASSERT_EQ(r.at("userns"), "ok") << r.log;
  int last_cap = 0;
  std::ifstream("/proc/sys/kernel/cap_last_cap") >> last_cap;
  char full[17];
  std::snprintf(full, sizeof full, "%016llx", (1ULL << (last_cap + 1)) - 1);
  EXPECT_EQ(r.at("capeff_before"), full) << r.log;  // every capability, inside the new user namespace
  EXPECT_EQ(r.at("mount_before"), "ok") << r.log;
  EXPECT_EQ(r.at("sethostname_before"), "ok") << r.log;
  ASSERT_EQ(r.at("drop"), "ok") << r.log;
  for (const char* f : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    EXPECT_EQ(r.at(f), "0000000000000000") << f << "\n" << r.log;
  }
  EXPECT_EQ(r.at("nnp"), "1");
  const int locked = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  EXPECT_EQ(r.at("securebits"), std::to_string(locked));
  EXPECT_EQ(r.at("mount_after"), "EPERM") << r.log;
  EXPECT_EQ(r.at("sethostname_after"), "EPERM") << r.log;
  EXPECT_EQ(r.at("setsecurebits_after"), "EPERM") << r.log;
  EXPECT_EQ(r.at("chown_to_unmapped"), "EINVAL") << r.log;  // ids outside the map never exist inside
  EXPECT_EQ(r.at("capeff_exec"), "0000000000000000") << r.log;
  EXPECT_EQ(r.at("exec_status"), "0") << r.log;
}

}  // namespace
}  // namespace oishell::test
