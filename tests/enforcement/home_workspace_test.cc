// A workspace that is the home directory: refused by default; allowed (--allow-home-workspace), the files the host
// runs or trusts stay read-only. Before, `--workspace ~` made ~/.bashrc, ~/.local/bin and ~/.gitconfig writable.
#include <sys/stat.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"
#include "pty_harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

// `oishell run` with $HOME set to `home` and that home as the workspace, on a terminal the test plays.
int run_in_home(const std::string& home, const std::vector<std::string>& flags, const std::string& script,
                std::string* output) {
  std::vector<std::string> argv = {"/usr/bin/env", "HOME=" + home, oishell_bin(), "run", "--workspace", home};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--", "/bin/sh", "-c", script});
  PtyRun run(argv);
  int status = run.wait_exit();
  *output = run.output();
  return status;
}

TEST(HomeWorkspace, RefusedWithTheOverrideNamed) {
  TempDir dir;
  std::string home = dir.path() + "/home";
  dir.write("home/.bashrc", "# rc\n");
  std::string out;
  EXPECT_EQ(125, run_in_home(home, {}, "echo ran", &out));
  EXPECT_NE(std::string::npos, out.find("it is your home directory")) << out;
  EXPECT_NE(std::string::npos, out.find("--allow-home-workspace")) << out;
  EXPECT_EQ(std::string::npos, out.find("ran")) << out;
}

TEST(HomeWorkspace, AllowedItsDotfilesAndBinStayReadOnly) {
  TempDir dir;
  std::string home = dir.path() + "/home";
  dir.write("home/.bashrc", "# rc\n");
  dir.write("home/.local/bin/tool", "#!/bin/sh\n");
  dir.write("home/bin/tool", "#!/bin/sh\n");
  dir.write("home/Documents/notes.txt", "notes\n");
  std::string out;
  // Paths spelled out: $HOME inside is another directory when the real one is under /tmp (as here).
  int status = run_in_home(home, {"--allow-home-workspace"},
                           "cd " + home + " && echo x >> .bashrc && echo rc=written || echo rc=refused; "
                           "echo x > .local/bin/tool && echo local=written || echo local=refused; "
                           "echo x > bin/tool && echo bin=written || echo bin=refused; "
                           "echo x > .zshenv && echo newdot=written || echo newdot=refused; "
                           "echo x > new-top && echo newtop=written || echo newtop=refused; "
                           "echo more >> Documents/notes.txt && echo docs=written || echo docs=refused",
                           &out);
  ASSERT_EQ(0, status) << out;
  for (const char* refused : {"rc=refused", "local=refused", "bin=refused", "newdot=refused", "newtop=refused"}) {
    EXPECT_NE(std::string::npos, out.find(refused)) << refused << "\n" << out;  // EROFS: without it, written
  }
  EXPECT_NE(std::string::npos, out.find("docs=written")) << out;  // the neighbour: ordinary files stay writable
  EXPECT_EQ("# rc\n", SandboxWorkspace::read(home + "/.bashrc"));
  EXPECT_EQ("notes\nmore\n", SandboxWorkspace::read(home + "/Documents/notes.txt"));
  struct stat st;
  EXPECT_NE(0, ::stat((home + "/.zshenv").c_str(), &st));
}

}  // namespace
}  // namespace oishell::test
