// Hidden paths stay unreadable however they are reached: directly, through a symlink or hardlink made in the
// workspace, through /proc/1/root or through another process's /proc/PID/cwd.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

TEST(HiddenPaths, HiddenFileReadDirectly) {
  SandboxWorkspace w;
  // On the host both files are readable by their owner.
  EXPECT_EQ("secret", probe_on_host({"cat", w.ws() + "/secret.txt"}));
  // Inside, the hidden file is an empty mode-0000 file bound over it: EACCES (no CAP_DAC_OVERRIDE, even as root).
  EXPECT_EQ("EACCES", w.probe({"cat", w.ws() + "/secret.txt"}));
  EXPECT_EQ("public", w.probe({"cat", w.ws() + "/public.txt"}));
}

TEST(HiddenPaths, HiddenDirectoryIsEmpty) {
  SandboxWorkspace w;
  EXPECT_EQ("key", probe_on_host({"cat", w.ws() + "/secretdir/key"}));
  // An empty read-only tmpfs covers the directory: its entries do not exist.
  EXPECT_EQ("ENOENT", w.probe({"cat", w.ws() + "/secretdir/key"}));
  EXPECT_EQ("ok", w.probe({"stat", w.ws() + "/secretdir"}));
}

TEST(HiddenPaths, ThroughSymlinkMadeInWorkspace) {
  SandboxWorkspace w;
  EXPECT_EQ("EACCES", w.probe({"open_via_symlink", w.ws() + "/secret.txt", w.ws() + "/link-to-secret"}));
  EXPECT_EQ("ok", w.probe({"open_via_symlink", w.ws() + "/public.txt", w.ws() + "/link-to-public"}));
}

TEST(HiddenPaths, ThroughHardlinkMadeInWorkspace) {
  SandboxWorkspace w;
  // The hidden file is a different mount than the workspace: link(2) across mounts is EXDEV.
  EXPECT_EQ("EXDEV", w.probe({"hardlink", w.ws() + "/secret.txt", w.ws() + "/hardlink-to-secret"}));
  EXPECT_EQ("ok", w.probe({"hardlink", w.ws() + "/public.txt", w.ws() + "/hardlink-to-public"}));
}

TEST(HiddenPaths, ThroughProcOneRoot) {
  SandboxWorkspace w;
  // Sandbox init is not dumpable, so /proc/1/root is closed to the sandboxed processes (EACCES) even for a
  // public file; on the host /proc/1/root is the host root, and the secret would be readable through it as root.
  EXPECT_EQ("EACCES", w.probe({"open", "/proc/1/root" + w.ws() + "/secret.txt", "r"}));
  EXPECT_EQ("EACCES", w.probe({"open", "/proc/1/root" + w.ws() + "/public.txt", "r"}));
  EXPECT_EQ("ok", w.probe({"open", "/proc/self/root" + w.ws() + "/public.txt", "r"}));
}

TEST(HiddenPaths, ThroughAnotherProcessCwd) {
  SandboxWorkspace w;
  // A sibling's cwd resolves inside the sandbox's own tree, where the file is hidden.
  EXPECT_EQ("EACCES", w.probe({"open_via_child_cwd", w.ws(), "secret.txt"}));
  EXPECT_EQ("ok", w.probe({"open_via_child_cwd", w.ws(), "public.txt"}));
}

TEST(HiddenPaths, HostHomeIsNotVisible) {
  SandboxWorkspace w;
  // The default profile gives an empty tmpfs home: nothing of the user's home shows in it, only the mount point of
  // what this harness binds in itself (`--ro` of the probe's folder) when the build tree lies in the home, as in a
  // clone in ~ (a fresh machine's `tools/dev test`).
  SandboxRun run = run_sandboxed(w.args(), {"/bin/sh", "-c", "echo \"$HOME\"; ls -A \"$HOME\""});
  ASSERT_EQ(0, run.status) << run.err;
  const std::string home = run.out.substr(0, run.out.find('\n'));
  ASSERT_FALSE(home.empty());
  const std::string bound = std::filesystem::path(probe_bin()).parent_path().string();
  std::string listed;  // the first part of the bound folder's path below the home, if it is there
  if (bound.starts_with(home + "/")) {
    std::string below = bound.substr(home.size() + 1);
    listed = below.substr(0, below.find('/')) + "\n";
  }
  EXPECT_EQ(home + "\n" + listed, run.out);
}

}  // namespace
}  // namespace oishell::test
