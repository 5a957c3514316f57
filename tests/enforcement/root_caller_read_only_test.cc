// A root caller's read-only paths are bound as the host has them, not id-mapped (runtime/outside/idmapped_binds.h,
// issue 33 finding 10): the sandbox's root is an unused id outside, so root-only files under a `read_only` path are
// "other" to it, as in the system directories. Before, every non-system bind was id-mapped: a policy listing /etc
// (or any directory) under `read_only` made /etc/ssl/private, /etc/sudoers and every 0600 root file below readable.
// What must be writable as the caller (the workspace, `read_write` paths) is still id-mapped, and so is a read-only
// path inside it (it shows nothing the writable bind does not).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"
#include "policy/compile.h"
#include "policy/mount_plan.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

// `path` created (or replaced) with `content` and exactly `mode`.
void make_file(const std::string& path, const std::string& content, mode_t mode) {
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << path << ": " << strerror(errno);
  ASSERT_EQ(static_cast<ssize_t>(content.size()), ::write(fd, content.data(), content.size()));
  ASSERT_EQ(0, ::fchmod(fd, mode));
  ::close(fd);
}

// A directory the test's user owns, searchable by everyone (mkdtemp's 0700 would make everything in it unreadable
// as "other" for a reason that is not the one under test), with
//   secret    0600  the root-only file
//   group     0640  root's group may read it (the sandbox has none of root's groups)
//   public    0644  the allowed neighbour
//   private/  0700  holding file (0644): unreachable without search permission on private/
// and a policy file beside it.
class SharedDir {
 public:
  SharedDir() {
    ::chmod(tmp_.path().c_str(), 0755);
    ::mkdir(dir().c_str(), 0755);
    ::chmod(dir().c_str(), 0755);  // whatever the umask
    make_file(dir() + "/secret", "root only\n", 0600);
    make_file(dir() + "/group", "root's group\n", 0640);
    make_file(dir() + "/public", "public\n", 0644);
    ::mkdir((dir() + "/private").c_str(), 0700);
    make_file(dir() + "/private/file", "in a private directory\n", 0644);
    tmp_.write("ws/file", "workspace\n");
  }
  std::string dir() const { return tmp_.path() + "/shared"; }
  std::string policy() const { return tmp_.path() + "/policy.yaml"; }
  std::string ws() const { return tmp_.path() + "/ws"; }
  // `oishell run` arguments for a policy (the default profile plus `filesystem`, a YAML block indented by two) and
  // the workspace ws/.
  std::vector<std::string> args(const std::string& filesystem, const std::string& workspace = "") const {
    tmp_.write("policy.yaml", "version: 1\nextends: default\nfilesystem:\n" + filesystem);
    return {"--policy", policy(), "--workspace", workspace.empty() ? ws() : workspace};
  }

 private:
  TempDir tmp_;
};

// A host file, owned by root, that only root may read (no group or other bits): what an ordinary user cannot read
// with or without the sandbox. Looked for in /etc (/etc/.pwd.lock, /etc/security/opasswd, ssh host keys, ...).
std::optional<std::string> root_only_file_in_etc() {
  for (const std::string dir : {"/etc", "/etc/security", "/etc/ssh", "/etc/ssl/private"}) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) continue;
    std::optional<std::string> found;
    while (dirent* e = ::readdir(d)) {
      std::string path = dir + "/" + e->d_name;
      struct stat st;
      if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && (st.st_mode & 077) == 0 &&
          (st.st_mode & 0400) != 0) {
        found = path;
        break;
      }
    }
    ::closedir(d);
    if (found) return found;
  }
  return std::nullopt;
}

class RootCallerReadOnly : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "the root caller's case (id-mapping); as an ordinary user the other uid's root-only file is "
                      "asserted by ReadOnlyPath.AnotherUsersOwnerOnlyFileStaysUnreadable";
    }
  }
};

TEST_F(RootCallerReadOnly, RootOnlyFilesUnderAReadOnlyPathAreUnreadable) {
  SharedDir d;
  ASSERT_EQ("ok", probe_on_host({"open", d.dir() + "/secret", "r"}));  // root reads it without the sandbox
  auto args = d.args("  read_only: [" + d.dir() + "]\n");
  EXPECT_EQ("EACCES", probe(args, {"open", d.dir() + "/secret", "r"}));
  EXPECT_EQ("EACCES", probe(args, {"open", d.dir() + "/group", "r"}));  // root's groups are gone too
  EXPECT_EQ("EACCES", probe(args, {"open", d.dir() + "/private/file", "r"}));  // private/ is 0700 root
  // The neighbour: what "other" may read.
  EXPECT_EQ("public", probe(args, {"cat", d.dir() + "/public"}));
  // Not writable: root's file, and "other" has no write bit (the bind is read-only too, and Landlock allows reading).
  EXPECT_EQ("EACCES", probe(args, {"open", d.dir() + "/public", "w"}));
}

// The finding as reported: the default profile's /etc keeps root-only files unreadable; listing /etc under
// read_only must not change that.
TEST_F(RootCallerReadOnly, ListingEtcReadOnlyKeepsItsRootOnlyFilesUnreadable) {
  SharedDir d;
  EtcFile owner_only(0600), everyone(0644);
  ASSERT_EQ("ok", probe_on_host({"open", owner_only.path(), "r"}));
  auto args = d.args("  read_only: [/etc]\n");
  EXPECT_EQ("EACCES", probe(args, {"open", owner_only.path(), "r"}));
  EXPECT_EQ("root only", probe(args, {"cat", everyone.path()}));
  EXPECT_EQ("EACCES", probe({"--workspace", d.ws()}, {"open", owner_only.path(), "r"}));  // the default profile
}

// A read-only workspace is not written either, so it is not id-mapped: a root caller could otherwise read /etc's
// root-only files with `--workspace /etc` and a read-only workspace (which may lie in a system directory).
TEST_F(RootCallerReadOnly, AReadOnlyWorkspaceIsNotIdMapped) {
  SharedDir d;
  auto args = d.args("  workspace_read_only: true\n", d.dir());
  EXPECT_EQ("EACCES", probe(args, {"open", d.dir() + "/secret", "r"}));
  EXPECT_EQ("public", probe(args, {"cat", d.dir() + "/public"}));
  // Not writable: root's file, and "other" has no write bit (the bind is read-only too, and Landlock allows reading).
  EXPECT_EQ("EACCES", probe(args, {"open", d.dir() + "/public", "w"}));
}

// A read-only workspace only root may search cannot be the sandbox's working directory: the error says so, instead
// of blaming the command.
TEST_F(RootCallerReadOnly, AReadOnlyWorkspaceOnlyRootMaySearchIsRefusedAsTheWorkingDirectory) {
  SharedDir d;
  auto args = d.args("  workspace_read_only: true\n", d.dir() + "/private");
  SandboxRun r = run_sandboxed(args, {"/bin/true"});
  EXPECT_EQ(126, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("working directory " + d.dir() + "/private inside the sandbox: EACCES"))
      << r.err;
  args = d.args("  workspace_read_only: true\n", d.dir());  // the neighbour: searchable by others
  EXPECT_EQ(0, run_sandboxed(args, {"/bin/true"}).status);
}

// The allowed neighbour: the same files under read_write are the sandbox root's own (id-mapped), readable and
// writable, and what it creates there is root's on the host.
TEST_F(RootCallerReadOnly, TheSameFilesUnderReadWriteAreTheCallers) {
  SharedDir d;
  auto args = d.args("  read_write: [" + d.dir() + "]\n");
  SandboxRun r = run_sandboxed(args, {"/bin/sh", "-c",
                                      "cat " + d.dir() + "/secret " + d.dir() + "/private/file && echo more >> " +
                                          d.dir() + "/secret && echo made > " + d.dir() + "/created"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ("root only\nin a private directory\n", r.out);
  EXPECT_EQ("root only\nmore\n", SandboxWorkspace::read(d.dir() + "/secret"));
  struct stat st;
  ASSERT_EQ(0, ::stat((d.dir() + "/created").c_str(), &st));
  EXPECT_EQ(0u, st.st_uid);  // root's on the host, not the unused id the sandbox runs as outside
  EXPECT_EQ(0u, st.st_gid);
  ASSERT_EQ(0, ::stat((d.dir() + "/secret").c_str(), &st));
  EXPECT_EQ(0u, st.st_uid);
  EXPECT_EQ(0600u, st.st_mode & 07777);
}

// A read-only path inside the writable workspace, and the workspace's protected .git, are read-only binds inside an
// id-mapped tree: they stay mapped (the workspace shows the same files as the caller's), and stay read-only.
TEST_F(RootCallerReadOnly, ReadOnlyPathsInsideTheWorkspaceAreTheCallersAsTheWorkspaceIs) {
  SharedDir d;
  const std::string vendor = d.ws() + "/vendor";
  ::mkdir(vendor.c_str(), 0700);
  make_file(vendor + "/key", "vendored\n", 0600);
  ::mkdir((d.ws() + "/.git").c_str(), 0700);
  make_file(d.ws() + "/.git/config", "[core]\n", 0600);
  make_file(d.ws() + "/.git/HEAD", "ref: refs/heads/main\n", 0600);
  auto args = d.args("  read_only: [" + vendor + "]\n");
  EXPECT_EQ("vendored", probe(args, {"cat", vendor + "/key"}));
  EXPECT_EQ("EROFS", probe(args, {"open", vendor + "/key", "w"}));
  EXPECT_EQ("[core]", probe(args, {"cat", d.ws() + "/.git/config"}));
  EXPECT_EQ("EROFS", probe(args, {"open", d.ws() + "/.git/config", "w"}));
  EXPECT_EQ("workspace", probe(args, {"cat", d.ws() + "/file"}));
}

// Either caller: a file only its owner may read, owned by another uid and listed under read_only, stays unreadable
// inside, as it is on the host (as root: a file of nobody's, which the sandbox's root does not own; as a user: a
// root-only file in /etc). Beside it, the caller's own files under read_only are readable.
TEST(ReadOnlyPath, AnotherUsersOwnerOnlyFileStaysUnreadable) {
  SharedDir d;
  std::string foreign;
  std::optional<EtcFile> etc_file;
  if (::geteuid() == 0) {
    etc_file.emplace(0600);
    ASSERT_EQ(0, ::chown(etc_file->path().c_str(), 65534, 65534));
    foreign = etc_file->path();
    ASSERT_EQ("ok", probe_on_host({"open", foreign, "r"}));  // root's capabilities, on the host
  } else {
    auto found = root_only_file_in_etc();
    ASSERT_TRUE(found) << "no root-owned file without group and other permissions in /etc, /etc/security, "
                          "/etc/ssh or /etc/ssl/private";
    foreign = *found;
    ASSERT_EQ("EACCES", probe_on_host({"open", foreign, "r"}));  // unreadable without the sandbox too
  }
  auto args = d.args("  read_only: [" + foreign + ", " + d.dir() + "]\n");
  EXPECT_EQ("EACCES", probe(args, {"open", foreign, "r"}));
  EXPECT_EQ("public", probe(args, {"cat", d.dir() + "/public"}));
  if (::geteuid() != 0) {
    EXPECT_EQ("root only", probe(args, {"cat", d.dir() + "/secret"}));  // the user's own 0600 file
  }
}

// The rule itself, on a compiled policy (pure: no sandbox, either caller): which binds a root caller's supervisor
// id-maps. /etc listed under read_only replaces the system bind of /etc (one bind per target), so the rule cannot
// rest on the `system` flag alone.
TEST(ReadOnlyPath, OnlyWritableBindsAndReadOnlyPathsInsideThemAreIdMapped) {
  SharedDir d;
  const std::string vendor = d.ws() + "/vendor";
  ::mkdir(vendor.c_str(), 0755);
  const std::string sibling = d.ws() + "-sibling";  // shares the workspace's prefix, not its tree
  ::mkdir(sibling.c_str(), 0755);
  const std::string out = d.dir() + "/private";
  d.args("  read_only: [/etc, /usr/share, " + d.dir() + ", " + vendor + ", " + sibling + "]\n  read_write: [" + out +
         "]\n");
  PolicyOverrides overrides;
  overrides.workspace = d.ws();
  auto spec = compile_policy(PolicySource{d.policy(), ""}, overrides, CompileContext::from_process());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  std::map<std::string, bool> mapped;
  for (size_t i = 0; i < spec->mounts.size(); ++i) {
    const MountStep& step = spec->mounts[i];
    if (step.kind == MountStep::Kind::bind_ro || step.kind == MountStep::Kind::bind_rw) {
      mapped[step.target] = policy::id_mapped_for_root_caller(*spec, i);
    }
  }
  EXPECT_TRUE(mapped.at(d.ws()));  // the workspace: written as the caller
  EXPECT_TRUE(mapped.at(out));     // read_write, even inside a read_only path
  EXPECT_TRUE(mapped.at(vendor));  // read_only inside the workspace
  EXPECT_FALSE(mapped.at("/etc"));
  EXPECT_FALSE(mapped.at("/usr/share"));
  EXPECT_FALSE(mapped.at("/usr"));  // a system directory
  EXPECT_FALSE(mapped.at(d.dir()));
  EXPECT_FALSE(mapped.at(sibling));
  // A read-only workspace is not written: not mapped either.
  overrides.workspace = d.dir();
  d.args("  workspace_read_only: true\n");
  auto read_only = compile_policy(PolicySource{d.policy(), ""}, overrides, CompileContext::from_process());
  ASSERT_TRUE(read_only.is_ok()) << read_only.status().message();
  for (size_t i = 0; i < read_only->mounts.size(); ++i) {
    EXPECT_FALSE(policy::id_mapped_for_root_caller(*read_only, i)) << read_only->mounts[i].target;
  }
}

}  // namespace
}  // namespace oishell::test
