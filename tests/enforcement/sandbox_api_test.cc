// The Sandbox API that executors build on (runtime/outside/sandbox.h): spawn with pipes or extra fds, signal a process
// group, exits through wait_fd()/next_exit() and wait(), the environment, and shutdown killing what is left.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "policy/compile.h"
#include "runtime/outside/sandbox.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

class SandboxApi : public ::testing::Test {
 protected:
  void SetUp() override {
    CompileContext context = CompileContext::from_process();
    context.host_env["OPENAI_API_KEY"] = "sk-not-passed";
    PolicyOverrides overrides;
    overrides.workspace = w_.ws();
    overrides.net_mode = "none";
    auto spec = compile_policy(PolicySource{w_.policy(), ""}, overrides, context);
    ASSERT_TRUE(spec.is_ok()) << spec.status().message();
    auto sandbox = Sandbox::create(*spec, events_);
    ASSERT_TRUE(sandbox.is_ok()) << sandbox.status().message();
    sandbox_ = std::move(sandbox.value());
  }

  static std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }

  SandboxWorkspace w_;
  NullEventSink events_;
  std::unique_ptr<Sandbox> sandbox_;
};

TEST_F(SandboxApi, PipesCarryStdio) {
  SpawnRequest request;
  request.argv = {"/bin/sh", "-c", "read line; echo \"got $line\"; echo err >&2; exit 4"};
  auto spawned = sandbox_->spawn(request);
  ASSERT_TRUE(spawned.is_ok()) << spawned.status().message();
  ASSERT_EQ(6, ::write(spawned->stdin_fd.get(), "hello\n", 6));
  spawned->stdin_fd.reset();
  EXPECT_EQ("got hello\n", read_all(spawned->stdout_fd.get()));
  EXPECT_EQ("err\n", read_all(spawned->stderr_fd.get()));
  auto exit = sandbox_->wait(spawned->id);
  ASSERT_TRUE(exit.is_ok()) << exit.status().message();
  EXPECT_EQ(4, exit->exit_code);
  EXPECT_EQ(0, exit->signal);
  // Collected once only.
  EXPECT_FALSE(sandbox_->wait(spawned->id).is_ok());
}

TEST_F(SandboxApi, EnvironmentIsTheSpecsPlusExtra) {
  SpawnRequest request;
  request.argv = {"/bin/sh", "-c", "echo \"${OPENAI_API_KEY:-unset} $EXTRA\""};
  request.extra_env = {{"EXTRA", "given"}};
  auto spawned = sandbox_->spawn(request);
  ASSERT_TRUE(spawned.is_ok()) << spawned.status().message();
  spawned->stdin_fd.reset();
  EXPECT_EQ("unset given\n", read_all(spawned->stdout_fd.get()));
  ASSERT_TRUE(sandbox_->wait(spawned->id).is_ok());
}

TEST_F(SandboxApi, ExtraFdsArriveAtThree) {
  int p[2];
  ASSERT_EQ(0, ::pipe2(p, O_CLOEXEC));
  SpawnRequest request;
  request.argv = {"/bin/sh", "-c", "echo through-fd-3 >&3"};
  request.extra_fds = {p[1]};
  auto spawned = sandbox_->spawn(request);
  ::close(p[1]);
  ASSERT_TRUE(spawned.is_ok()) << spawned.status().message();
  EXPECT_EQ("through-fd-3\n", read_all(p[0]));
  ::close(p[0]);
  ASSERT_TRUE(sandbox_->wait(spawned->id).is_ok());
}

TEST_F(SandboxApi, SignalReachesTheProcessGroupAndExitsArePolled) {
  SpawnRequest request;
  request.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30; echo not-reached"};
  auto spawned = sandbox_->spawn(request);
  ASSERT_TRUE(spawned.is_ok()) << spawned.status().message();
  EXPECT_FALSE(sandbox_->next_exit().has_value());
  ASSERT_TRUE(sandbox_->signal(spawned->id, SIGTERM).is_ok());
  pollfd pfd{sandbox_->wait_fd(), POLLIN, 0};
  ASSERT_EQ(1, ::poll(&pfd, 1, 10'000));
  auto exit = sandbox_->next_exit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(spawned->id, exit->id);
  EXPECT_EQ(SIGTERM, exit->signal);
  EXPECT_EQ(128 + SIGTERM, exit->shell_status());
  EXPECT_FALSE(sandbox_->next_exit().has_value());
  EXPECT_EQ(0, ::poll(&pfd, 1, 0));  // not readable once drained
  EXPECT_FALSE(sandbox_->signal(spawned->id, SIGTERM).is_ok());  // ESRCH: it has exited
}

TEST_F(SandboxApi, CommandNotFoundIsEnoent) {
  SpawnRequest request;
  request.argv = {"oishell-no-such-command"};
  auto spawned = sandbox_->spawn(request);
  ASSERT_FALSE(spawned.is_ok());
  EXPECT_EQ(ENOENT, spawned.status().errno_value());
  request.argv = {"true"};
  EXPECT_TRUE(sandbox_->spawn(request).is_ok());
}

TEST_F(SandboxApi, ShutdownKillsWhatIsLeft) {
  SpawnRequest request;
  request.argv = {"/bin/sh", "-c", "sleep 30"};
  auto spawned = sandbox_->spawn(request);
  ASSERT_TRUE(spawned.is_ok()) << spawned.status().message();
  sandbox_->shutdown();
  auto exit = sandbox_->wait(spawned->id);
  ASSERT_TRUE(exit.is_ok()) << exit.status().message();
  EXPECT_EQ(SIGKILL, exit->signal);
  EXPECT_EQ("sandbox shut down", exit->reason);
  EXPECT_FALSE(sandbox_->spawn(request).is_ok());
  sandbox_->shutdown();  // idempotent
}

}  // namespace
}  // namespace oishell::test
