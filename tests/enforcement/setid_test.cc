// Set-id files: no call from inside may put a set-user-ID or set-group-ID bit on a file (the `setid_files` seccomp
// set), or a file capability on one (no CAP_SETFCAP: the capability drop, not seccomp). A sandbox started by root
// runs as root's uid, and could otherwise leave set-uid-root programs in the host's workspace. Each denial sits
// beside the same call with an ordinary mode, which works and changes the host's file.
//
// Without the sandbox each denied call succeeds: the file is the caller's own, so chmod 4755 and a set-id create
// keep the bits (S_ISGID too: the file's group is the caller's).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

std::string octal(unsigned mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%o", mode);
  return buf;
}

// The host's mode bits of `path` (permissions, sticky, set-id; no type), or -1 when it does not exist.
long mode_of(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return -1;
  return st.st_mode & 07777;
}

// The denied events of an events file, as "syscall/set/errno" lines.
std::string denied_events(const std::string& events) {
  std::ifstream in(events);
  std::string line, out;
  while (std::getline(in, line)) {
    auto e = nlohmann::json::parse(line, nullptr, false);
    if (e.is_discarded() || e.value("event", "") != "denied") continue;
    out += e.value("syscall", "") + "/" + e.value("set", "") + "/" + e.value("errno", "") + "\n";
  }
  return out;
}

// chmod, fchmod, fchmodat on a workspace file: 4755 and 2755 are denied and leave the host's file as it was; 0755
// and 01777 (sticky) go through and change it.
void expect_chmod_family(const std::string& call) {
  SandboxWorkspace w;
  const std::string file = w.ws() + "/public.txt";
  ASSERT_EQ(0, ::chmod(file.c_str(), 0644));
  for (unsigned mode : {04755u, 02755u, 06755u, 04644u}) {
    EXPECT_EQ("EPERM", w.probe({"mode_call", call, file, octal(mode)})) << call << " " << octal(mode);
    EXPECT_EQ(0644, mode_of(file)) << call << " " << octal(mode) << " changed the host's file";
  }
  EXPECT_EQ("ok", w.probe({"mode_call", call, file, "755"})) << call;
  EXPECT_EQ(0755, mode_of(file)) << call;
  EXPECT_EQ("ok", w.probe({"mode_call", call, file, "1777"})) << call;
  EXPECT_EQ(01777, mode_of(file)) << call;
}

TEST(SetIdFiles, Chmod) { expect_chmod_family("chmod"); }
TEST(SetIdFiles, Fchmod) { expect_chmod_family("fchmod"); }
TEST(SetIdFiles, Fchmodat) { expect_chmod_family("fchmodat"); }

// fchmodat2 (Linux 6.6): the filter answers before the kernel, so the denial holds on any kernel; the neighbour
// needs a kernel that has the call.
TEST(SetIdFiles, Fchmodat2SetIdDenied) {
  SandboxWorkspace w;
  const std::string file = w.ws() + "/public.txt";
  ASSERT_EQ(0, ::chmod(file.c_str(), 0644));
  EXPECT_EQ("EPERM", w.probe({"mode_call", "fchmodat2", file, "4755"}));
  EXPECT_EQ("EPERM", w.probe({"mode_call", "fchmodat2", file, "2755"}));
  EXPECT_EQ(0644, mode_of(file));
}

TEST(SetIdFiles, Fchmodat2OrdinaryModes) {
  SandboxWorkspace w;
  const std::string file = w.ws() + "/public.txt";
  if (probe_on_host({"mode_call", "fchmodat2", w.path("outside/file"), "644"}) == "ENOSYS") {
    GTEST_SKIP() << "kernel feature missing: fchmodat2 (Linux 6.6)";
  }
  EXPECT_EQ("ok", w.probe({"mode_call", "fchmodat2", file, "755"}));
  EXPECT_EQ(0755, mode_of(file));
  EXPECT_EQ("ok", w.probe({"mode_call", "fchmodat2", file, "1777"}));
  EXPECT_EQ(01777, mode_of(file));
}

// open/openat with O_CREAT and creat: a set-id mode is denied and no file appears; 0755 creates it (the umask may
// take bits away, never add set-id bits).
TEST(SetIdFiles, CreateWithSetIdMode) {
  SandboxWorkspace w;
  for (const char* call : {"open", "openat", "creat"}) {
    const std::string file = w.ws() + "/new-" + call;
    EXPECT_EQ("EPERM", w.probe({"mode_call", call, file, "4755"})) << call;
    EXPECT_EQ("EPERM", w.probe({"mode_call", call, file, "2755"})) << call;
    EXPECT_EQ(-1, mode_of(file)) << call << " left a file";
    EXPECT_EQ("ok", w.probe({"mode_call", call, file, "755"})) << call;
    long mode = mode_of(file);
    ASSERT_NE(-1, mode) << call << " made no file";
    EXPECT_EQ(0, mode & 07000) << call;
    EXPECT_EQ(0700, mode & 0700) << call;
  }
}

// O_TMPFILE: an unnamed file (linkable later with linkat) with 02755 is denied; 0755 works where the host's file
// system offers O_TMPFILE.
TEST(SetIdFiles, TmpfileWithSetGid) {
  SandboxWorkspace w;
  EXPECT_EQ("EPERM", w.probe({"mode_call", "tmpfile", w.ws(), "2755"}));
  EXPECT_EQ("EPERM", w.probe({"mode_call", "tmpfile", w.ws(), "4755"}));
  const std::string host = probe_on_host({"mode_call", "tmpfile", w.outside(), "755"});
  if (host != "ok") {
    GTEST_SKIP() << "kernel or file system feature missing: O_TMPFILE in " << w.outside() << ": " << host;
  }
  EXPECT_EQ("ok", w.probe({"mode_call", "tmpfile", w.ws(), "755"}));
}

// mknod makes regular files too: S_IFREG|S_ISUID is denied; a fifo with 0644 is made.
TEST(SetIdFiles, Mknod) {
  SandboxWorkspace w;
  for (const char* call : {"mknod", "mknodat"}) {
    const std::string reg = w.ws() + "/reg-" + call;
    const std::string fifo = w.ws() + "/fifo-" + call;
    EXPECT_EQ("EPERM", w.probe({"mode_call", call, reg, octal(S_IFREG | S_ISUID | 0755)})) << call;
    EXPECT_EQ("EPERM", w.probe({"mode_call", call, reg, octal(S_IFREG | S_ISGID | 0755)})) << call;
    EXPECT_EQ(-1, mode_of(reg)) << call << " left a file";
    EXPECT_EQ("ok", w.probe({"mode_call", call, fifo, octal(S_IFIFO | 0644)})) << call;
    struct stat st;
    ASSERT_EQ(0, ::lstat(fifo.c_str(), &st)) << call;
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << call;
  }
}

// openat2 takes its mode in memory the filter cannot read: ENOSYS, answered by the filter and not reported (callers
// fall back to openat). Without the sandbox: ok.
TEST(SetIdFiles, Openat2IsEnosysAndUnreported) {
  SandboxWorkspace w;
  EXPECT_EQ("ok", probe_on_host({"openat2", w.ws() + "/public.txt"}));
  const std::string events = w.path("events.jsonl");
  EXPECT_EQ("ENOSYS", w.probe({"openat2", w.ws() + "/public.txt"}, {"--events", events}));
  EXPECT_EQ("", denied_events(events));
  EXPECT_EQ("ok", w.probe({"open", w.ws() + "/public.txt", "r"}));  // the fallback
}

// A file capability is the other way to leave a privileged program behind. Not seccomp: setting security.capability
// needs CAP_SETFCAP, and the sandbox holds no capability (runtime/inside/caps.cc). Without the sandbox: ok as root (EPERM
// as an ordinary user, who has no CAP_SETFCAP either).
TEST(SetIdFiles, FileCapabilityNeedsCapSetfcap) {
  SandboxWorkspace w;
  const std::string file = w.ws() + "/public.txt";
  EXPECT_EQ("EPERM", w.probe({"setxattr_caps", file}));
  const std::string host = probe_on_host({"setxattr_user", w.outside() + "/file"});
  if (host != "ok") GTEST_SKIP() << "file system feature missing: user xattrs in " << w.outside() << ": " << host;
  EXPECT_EQ("ok", w.probe({"setxattr_user", file}));
}

// A denial reaches the events file as a `denied` event naming the call and the set.
TEST(SetIdFiles, DenialIsReported) {
  SandboxWorkspace w;
  const std::string events = w.path("events.jsonl");
  EXPECT_EQ("EPERM", w.probe({"mode_call", "chmod", w.ws() + "/public.txt", "4755"}, {"--events", events}));
  EXPECT_EQ("chmod/setid_files/EPERM\n", denied_events(events)) << SandboxWorkspace::read(events);
}

}  // namespace
}  // namespace oishell::test
