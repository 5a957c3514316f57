// `oishell run` exit statuses: the command's, 128+N for signal N, 127 not found, 126 not executable or no
// sandbox, 125 invalid policy; the wall-time limit kills and says so.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

TEST(ExitStatus, CommandStatusPropagates) {
  SandboxWorkspace w;
  EXPECT_EQ(0, run_sandboxed(w.args(), {probe_bin(), "exit", "0"}).status);
  EXPECT_EQ(3, run_sandboxed(w.args(), {probe_bin(), "exit", "3"}).status);
  EXPECT_EQ(42, run_sandboxed(w.args(), {probe_bin(), "exit", "42"}).status);
}

TEST(ExitStatus, SignalIs128PlusN) {
  SandboxWorkspace w;
  EXPECT_EQ(128 + 15, run_sandboxed(w.args(), {probe_bin(), "raise", "15"}).status);
  EXPECT_EQ(128 + 9, run_sandboxed(w.args(), {probe_bin(), "raise", "9"}).status);
}

TEST(ExitStatus, CommandNotFound) {
  SandboxWorkspace w;
  SandboxRun run = run_sandboxed(w.args(), {"oishell-no-such-command"});
  EXPECT_EQ(127, run.status);
  EXPECT_NE(std::string::npos, run.err.find("command not found")) << run.err;
  EXPECT_EQ(0, run_sandboxed(w.args(), {"true"}).status);  // found through the sandbox's PATH
}

TEST(ExitStatus, NotExecutable) {
  SandboxWorkspace w;
  const std::string script = w.ws() + "/script.sh";
  ASSERT_EQ(0, run_sandboxed(w.args(), {"/bin/sh", "-c", "printf '#!/bin/sh\\nexit 5\\n' > " + script}).status);
  EXPECT_EQ(126, run_sandboxed(w.args(), {script}).status);
  ASSERT_EQ(0, ::chmod(script.c_str(), 0755));
  EXPECT_EQ(5, run_sandboxed(w.args(), {script}).status);
}

TEST(ExitStatus, InvalidPolicy) {
  SandboxWorkspace w;
  TempDir dir;
  std::string policy = dir.write("bad.yaml", "version: 1\nfilesystem:\n  no_such_key: 1\n");
  SandboxRun run = run_sandboxed({"--policy", policy, "--workspace", w.ws()}, {probe_bin(), "exit", "0"});
  EXPECT_EQ(125, run.status);
  EXPECT_NE(std::string::npos, run.err.find("no_such_key")) << run.err;
}

TEST(ExitStatus, WallTimeLimit) {
  SandboxWorkspace w;
  SandboxRun run = run_sandboxed(w.args({"--timeout", "1s"}), {probe_bin(), "sleep", "20000"});
  EXPECT_EQ(128 + 9, run.status);
  EXPECT_NE(std::string::npos, run.err.find("killed: wall time limit 1s")) << run.err;
  EXPECT_EQ(0, run_sandboxed(w.args({"--timeout", "10s"}), {probe_bin(), "sleep", "10"}).status);
}

}  // namespace
}  // namespace oishell::test
