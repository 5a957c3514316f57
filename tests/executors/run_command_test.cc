// The protocol's `run` op (docs/protocol.md): a one-shot command started by the sandbox (no executor, no shell),
// with its output streamed, its stdin fed, its working directory, its wall time, interrupts, and the errors of a
// program that is not there and of a bad request; in both sandbox modes. `exec`'s `timeout_ms` is here too.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/executors/supervisor_client.h"

namespace oishell::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class RunCommandTest : public SupervisorModeTest {
 protected:
  BlockResult run(SupervisorClient& c, json request, std::chrono::milliseconds timeout = 30s) {
    const std::string id = c.next_id();
    request["op"] = "run";
    request["id"] = id;
    c.send(request);
    return c.collect(id, timeout);
  }
};

TEST_P(RunCommandTest, ArgvRunsAsGivenWithItsStatusAndStreams) {
  auto c = start();
  auto ok = run(*c, {{"argv", {"sh", "-c", "echo out; echo err >&2"}}});
  EXPECT_EQ("ok", ok.done.value("status", "")) << ok.err;
  EXPECT_EQ("out\n", ok.out);
  EXPECT_EQ("err\n", ok.err);
  // No shell between: the argument with a space and a `$` arrives as one word, unexpanded.
  auto literal = run(*c, {{"argv", {"printf", "%s|", "a b", "$HOME"}}});
  EXPECT_EQ("a b|$HOME|", literal.out);
  auto failed = run(*c, {{"argv", {"sh", "-c", "exit 3"}}});
  EXPECT_EQ("error", failed.done.value("status", ""));
  EXPECT_EQ(3, failed.done.value("exit_code", -1));
}

TEST_P(RunCommandTest, StdinIsFedWhenGivenAndEofOtherwise) {
  auto c = start();
  const std::string big(300 * 1024, 'x');  // more than a pipe holds: written as the command reads
  auto fed = run(*c, {{"argv", {"wc", "-c"}}, {"stdin", big}});
  EXPECT_EQ(std::to_string(big.size()) + "\n", fed.out);
  auto eof = run(*c, {{"argv", {"cat"}}}, 10s);
  EXPECT_EQ("ok", eof.done.value("status", ""));
  EXPECT_EQ("", eof.out);
}

TEST_P(RunCommandTest, CwdIsWhereItRuns) {
  auto c = start();
  auto r = run(*c, {{"argv", {"pwd"}}, {"cwd", "/tmp"}});
  EXPECT_EQ("/tmp\n", r.out) << r.err;
  auto workspace = run(*c, {{"argv", {"pwd"}}});
  EXPECT_EQ(dir_.path() + "\n", workspace.out);
}

TEST_P(RunCommandTest, TimeoutAndInterruptEndIt) {
  auto c = start();
  const auto started = std::chrono::steady_clock::now();
  auto timed = run(*c, {{"argv", {"sleep", "30"}}, {"timeout_ms", 300}});
  EXPECT_EQ("timeout", timed.done.value("status", ""));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  const std::string id = c->next_id();
  c->send({{"op", "run"}, {"id", id}, {"argv", {"sleep", "30"}}});
  std::this_thread::sleep_for(300ms);
  c->send({{"op", "interrupt"}, {"id", id}});
  auto interrupted = c->collect(id, 10s);
  EXPECT_EQ("interrupted", interrupted.done.value("status", ""));
  EXPECT_EQ(130, interrupted.done.value("exit_code", -1));
  // exec's own timeout_ms, shorter than the session's (none here).
  const std::string block = c->next_id();
  c->send({{"op", "exec"}, {"id", block}, {"language", "shell"}, {"code", "sleep 30"}, {"timeout_ms", 300}});
  EXPECT_EQ("timeout", c->collect(block, 20s).done.value("status", ""));
}

TEST_P(RunCommandTest, AMissingProgramAndBadRequestsAreErrors) {
  auto c = start();
  auto missing = run(*c, {{"argv", {"no-such-program-here"}}});
  EXPECT_EQ("error", missing.done.value("status", "")) << missing.done.dump();
  EXPECT_EQ(127, missing.done.value("exit_code", -1));
  c->send({{"op", "run"}, {"id", "bad"}, {"argv", json::array()}});
  json error = c->wait_for([](const json& e) { return e.value("event", "") == "error"; }, 10s);
  EXPECT_NE(std::string::npos, error.value("message", "").find("`argv` must be a non-empty array")) << error.dump();
  c->send({{"op", "run"}, {"id", "t"}, {"argv", {"true"}}, {"timeout_ms", 0}});
  error = c->wait_for([](const json& e) {
    return e.value("event", "") == "error" && e.value("message", "").find("timeout_ms") != std::string::npos;
  }, 10s);
  EXPECT_TRUE(error.is_object());
  // The neighbour of the bad ones still runs.
  EXPECT_EQ("ok", run(*c, {{"argv", {"true"}}}).done.value("status", ""));
}

INSTANTIATE_TEST_SUITE_P(Modes, RunCommandTest, ::testing::Values("none", "openshell"),
                         [](const auto& info) { return info.param == "none" ? "NoSandbox" : "Sandbox"; });

}  // namespace
}  // namespace oishell::test
