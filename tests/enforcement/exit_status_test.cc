// `oishell run` exit statuses: the command's, 128+N for signal N, 127 not found, 126 not executable or no
// sandbox, 125 invalid policy; the wall-time limit kills and says so.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

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

// `oishell run` started directly, so that the test can signal it: the command touches `started` in the workspace,
// then sleeps. Returns oishell's wait status after `sig` reached oishell, and how long the sandbox took to end.
struct SignalledRun {
  int status = -1;
  std::chrono::milliseconds ended_after{0};
};

SignalledRun signal_oishell_while_running(const SandboxWorkspace& w, int sig) {
  std::vector<std::string> argv = {oishell_bin(), "run"};
  for (const auto& a : w.args()) argv.push_back(a);
  for (const char* a : {"--", "/bin/sh", "-c", "touch started && exec sleep 30"}) argv.push_back(a);
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  SignalledRun run;
  if (pid < 0) return run;
  const std::string started = w.ws() + "/started";
  for (int i = 0; i < 1000 && ::access(started.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto sent = std::chrono::steady_clock::now();
  ::kill(pid, sig);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.status = status;
  run.ended_after =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - sent);
  return run;
}

// SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to oishell go to the command (which runs in its own session, so the
// terminal's Ctrl-C would not reach it otherwise); oishell then exits with the command's 128+N. Without the
// forwarding the command would sleep its 30 s.
TEST(ExitStatus, SignalsToOishellReachTheCommand) {
  SandboxWorkspace w;
  for (int sig : {SIGTERM, SIGINT}) {
    ::unlink((w.ws() + "/started").c_str());
    SignalledRun run = signal_oishell_while_running(w, sig);
    ASSERT_TRUE(WIFEXITED(run.status)) << "signal " << sig << ": oishell itself died, status " << run.status;
    EXPECT_EQ(128 + sig, WEXITSTATUS(run.status)) << "signal " << sig;
    EXPECT_LT(run.ended_after.count(), 10'000) << "signal " << sig;
  }
  // The neighbour: unsignalled, the same command runs to its end.
  EXPECT_EQ(0, run_sandboxed(w.args(), {"/bin/sh", "-c", "touch started && exec sleep 0.1"}).status);
}

}  // namespace
}  // namespace oishell::test
