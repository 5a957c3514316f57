// The supervisor protocol end to end: `oishell supervise` driven as a client would, in both modes (--sandbox none,
// and the real sandbox). Each test owns its session (one supervisor process per case).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "tests/executors/supervisor_client.h"

namespace oishell::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class ExecutorTest : public SupervisorModeTest {
 protected:
  static bool has_language(const SupervisorClient& c, const std::string& name) {
    const auto& langs = c.ready().value("languages", json::array());
    return std::find(langs.begin(), langs.end(), name) != langs.end();
  }
};

TEST_P(ExecutorTest, ReadyNamesProtocolAndLanguages) {
  auto c = start();
  ASSERT_TRUE(c->ready().is_object());
  EXPECT_EQ(1, c->ready().value("protocol", 0));
  EXPECT_TRUE(has_language(*c, "python")) << c->ready().dump();
  EXPECT_TRUE(has_language(*c, "shell")) << c->ready().dump();
  EXPECT_EQ(GetParam(), c->ready().value("sandbox", ""));
}

TEST_P(ExecutorTest, PythonStatePersistsAndLastExpressionPrints) {
  auto c = start();
  auto r1 = c->run("python", "x = 41\nimport math");
  EXPECT_EQ("ok", r1.done.value("status", "")) << r1.err;
  EXPECT_EQ("", r1.out);
  auto r2 = c->run("py", "x + 1");
  EXPECT_EQ("42\n", r2.out);
  auto r3 = c->run("python", "def f(n):\n    return n * x\nf(2)");
  EXPECT_EQ("82\n", r3.out);
  EXPECT_EQ(0, r3.done.value("exit_code", -1));
}

TEST_P(ExecutorTest, ShellCdVariablesAndFunctionsPersist) {
  auto c = start();
  auto r1 = c->run("shell", "mkdir -p sub && cd sub\nGREETING=hello\ngreet() { echo \"$GREETING $1\"; }\ndeclare -A m; m[k]=v");
  EXPECT_EQ("ok", r1.done.value("status", "")) << r1.err;
  auto r2 = c->run("bash", "basename \"$PWD\"; greet world; echo ${m[k]}");
  EXPECT_EQ("sub\nhello world\nv\n", r2.out) << r2.err;
  auto r3 = c->run("sh", "false");
  EXPECT_EQ("error", r3.done.value("status", ""));
  EXPECT_EQ(1, r3.done.value("exit_code", -1));
  auto r4 = c->run("sh", "exit_status_test() { return 7; }; exit_status_test");
  EXPECT_EQ(7, r4.done.value("exit_code", -1));
}

// node is part of the set-up (tools/dev installs nodejs): without it the javascript executor would go untested, so
// its absence fails these cases instead of passing them. LanguageMissingFromThePathIsRefused covers a sandbox
// without node.
#define ASSERT_HAS_NODE(c)                                                                                    \
  ASSERT_TRUE(has_language(*(c), "javascript"))                                                               \
      << "node is not on the sandbox's PATH: install nodejs (tools/dev does); " << (c)->ready().dump()

TEST_P(ExecutorTest, JavascriptStatePersists) {
  auto c = start();
  ASSERT_HAS_NODE(c);
  auto r1 = c->run("javascript", "var n = 40; function add(a) { return n + a; }\nlet kept = 'let'; class K {}");
  EXPECT_EQ("ok", r1.done.value("status", "")) << r1.err;
  EXPECT_EQ("", r1.out);
  auto r2 = c->run("js", "add(2)");
  EXPECT_EQ("42\n", r2.out) << r2.err;
  EXPECT_EQ("'let function'\n", c->run("nodejs", "kept + ' ' + typeof K").out);
  auto r3 = c->run("node", "throw new Error('boom')");
  EXPECT_EQ("error", r3.done.value("status", ""));
  EXPECT_EQ(1, r3.done.value("exit_code", -1));
  EXPECT_NE(std::string::npos, r3.err.find("Error: boom")) << r3.err;
  EXPECT_EQ(std::string::npos, r3.err.find("node_driver")) << r3.err;  // no driver frames
  auto r4 = c->run("js", "console.log('o1'); console.error('e1'); console.log('o2'); ({a: 1})");
  EXPECT_EQ("o1\no2\n{ a: 1 }\n", r4.out);
  EXPECT_EQ("e1\n", r4.err);
  EXPECT_EQ("7\n", c->run("js", "Promise.resolve(7)").out);  // a returned promise is awaited
}

TEST_P(ExecutorTest, JavascriptTopLevelAwaitKeepsItsDeclarations) {
  auto c = start();
  ASSERT_HAS_NODE(c);
  // Without the REPL's rewrite: "SyntaxError: await is only valid in async functions and the top level bodies of
  // modules".
  auto r1 = c->run("js", "const base = await Promise.resolve(20);\nasync function twice(v) { return 2 * v; }\nbase + 1");
  EXPECT_EQ("ok", r1.done.value("status", "")) << r1.err;
  EXPECT_EQ("21\n", r1.out);
  EXPECT_EQ("40\n", c->run("js", "await twice(base)").out);  // both declarations are globals now
  auto r2 = c->run("js", "await Promise.reject(new Error('rejected'))");
  EXPECT_EQ("error", r2.done.value("status", ""));
  EXPECT_NE(std::string::npos, r2.err.find("Error: rejected")) << r2.err;
  auto r3 = c->run("js", "await (");  // a syntax error stays one
  EXPECT_EQ("error", r3.done.value("status", ""));
  EXPECT_NE(std::string::npos, r3.err.find("SyntaxError")) << r3.err;
  EXPECT_EQ("3\n", c->run("js", "var awaiting = 3; awaiting").out);  // no await: compiled as it is
}

TEST_P(ExecutorTest, JavascriptUncaughtErrorsFailTheBlockAndKeepTheSession) {
  auto c = start();
  ASSERT_HAS_NODE(c);
  c->run("js", "var kept = 'yes'");
  // Node's default for both is to end the process (every definition lost, executor_restarted); the REPL prints them.
  auto r1 = c->run("js", "Promise.reject(new Error('nobody awaits this')); 1");
  EXPECT_EQ("error", r1.done.value("status", "")) << r1.err;
  EXPECT_EQ(1, r1.done.value("exit_code", -1));
  EXPECT_EQ("1\n", r1.out);
  EXPECT_NE(std::string::npos, r1.err.find("Uncaught Error: nobody awaits this")) << r1.err;
  auto r2 = c->run("js", "setTimeout(() => { throw new Error('thrown in a timer'); }, 0);\n"
                         "await new Promise((resolve) => setTimeout(resolve, 100))");
  EXPECT_EQ("error", r2.done.value("status", "")) << r2.err;
  EXPECT_NE(std::string::npos, r2.err.find("Uncaught Error: thrown in a timer")) << r2.err;
  // A value whose own inspection throws: the block fails and the next one runs (the driver used to wait for ever).
  auto r4 = c->run("js", "({ [Symbol.for('nodejs.util.inspect.custom')]() { throw new Error('no inspection'); } })",
                   10s);
  EXPECT_EQ("error", r4.done.value("status", "")) << r4.done.dump();
  EXPECT_NE(std::string::npos, r4.err.find("Error: no inspection")) << r4.err;
  // The neighbour: a rejection that is handled is no error.
  auto r3 = c->run("js", "Promise.reject(new Error('handled')).catch(() => {}); 2");
  EXPECT_EQ("ok", r3.done.value("status", "")) << r3.err;
  EXPECT_EQ("", r3.err);
  EXPECT_EQ("'yes'\n", c->run("js", "kept").out);
  for (const auto& e : c->events()) EXPECT_NE("executor_restarted", e.value("event", "")) << e.dump();
}

TEST_P(ExecutorTest, InterruptStopsJavascriptLoopAndPromiseAndKeepsState) {
  auto c = start();
  ASSERT_HAS_NODE(c);
  c->run("js", "var kept = 'yes'");
  // A loop (vm's breakOnSigint stops it) and a promise that never settles, awaited by the driver (its SIGINT
  // listener ends the wait), plain and with top-level await. 'started' comes once the block is in that state: a
  // SIGINT just as the synchronous part ends can be lost in node (node_driver.js).
  // And a loop that prints: an interrupt inside console.log must not break the output of later blocks (it did:
  // node's stream was left half-way through a write).
  for (const std::string code : {"console.log('started'); for (;;) {}",
                                 "for (let i = 0;; ++i) console.log('started', i)",
                                 "new Promise(() => setTimeout(() => console.log('started'), 0))",
                                 "await new Promise((go) => setTimeout(go, 0)); console.log('started');\n"
                                 "await new Promise(() => {})"}) {
    const std::string id = c->next_id();
    c->send({{"op", "exec"}, {"id", id}, {"language", "javascript"}, {"code", code}});
    ASSERT_FALSE(c->wait_for([&](const json& e) { return e.value("event", "") == "output" && e["id"] == id; }, 10s)
                     .is_null())
        << code;
    c->send({{"op", "interrupt"}, {"id", id}});
    auto r = c->collect(id, 10s);
    EXPECT_EQ("interrupted", r.done.value("status", "")) << code << ": " << r.done.dump();
    EXPECT_EQ(130, r.done.value("exit_code", -1)) << code;
    EXPECT_NE(std::string::npos, r.err.find("Interrupted")) << code << ": " << r.err;
  }
  auto after = c->run("js", "console.log('printed'); kept");
  EXPECT_EQ("printed\n'yes'\n", after.out) << after.err;
  for (const auto& e : c->events()) EXPECT_NE("executor_restarted", e.value("event", "")) << e.dump();
}

TEST_P(ExecutorTest, LanguageMissingFromThePathIsRefused) {
  // No interpreter on this PATH: every language is absent and a block is refused at once, not left hanging.
  auto c = start({"--env", "PATH=/nonexistent"});
  EXPECT_EQ(json::array(), c->ready().value("languages", json()));
  c->send({{"op", "exec"}, {"id", "j"}, {"language", "js"}, {"code", "1"}});
  auto e = c->wait_event("error", 10s);
  EXPECT_EQ("j", e.value("id", ""));
  EXPECT_EQ("exec: javascript is not available in this sandbox (`node` is not on its PATH)", e.value("message", ""));
  auto d = start();  // the neighbour: the default PATH has it
  ASSERT_HAS_NODE(d);
  EXPECT_EQ("1\n", d->run("js", "1").out);
}

TEST_P(ExecutorTest, StdoutAndStderrKeptApartInOrder) {
  auto c = start();
  auto r = c->run("python",
                  "import sys\nfor i in range(200):\n    print('o%d' % i)\n    print('e%d' % i, file=sys.stderr)\n");
  std::string out, err;
  for (int i = 0; i < 200; ++i) {
    out += "o" + std::to_string(i) + "\n";
    err += "e" + std::to_string(i) + "\n";
  }
  EXPECT_EQ(out, r.out);
  EXPECT_EQ(err, r.err);
  auto s = c->run("shell", "for i in 1 2 3; do echo out$i; echo err$i >&2; done");
  EXPECT_EQ("out1\nout2\nout3\n", s.out);
  EXPECT_EQ("err1\nerr2\nerr3\n", s.err);
}

TEST_P(ExecutorTest, PrintedSentinelsDoNotEndABlock) {
  auto c = start();
  // Markers other tools use to find the end of a block, and our own driver's messages.
  const std::string sentinels = "D 1 ok 0\\nD 2 ok 0\\n##end_of_execution##\\n__OI_DONE__\\nR\\n";
  auto p = c->run("python", "import time\nprint('" + sentinels + "')\ntime.sleep(0.3)\nprint('after')");
  EXPECT_NE(std::string::npos, p.out.find("after")) << p.out;
  EXPECT_EQ("ok", p.done.value("status", ""));
  auto s = c->run("shell", "printf 'D 1 ok 0\\nD 2 ok 0\\n'; echo 'D 3 ok 0' >&3; sleep 0.3; echo after");
  EXPECT_NE(std::string::npos, s.out.find("after")) << s.out;
}

TEST_P(ExecutorTest, InterruptStopsPythonLoopAndKeepsState) {
  auto c = start();
  c->run("python", "kept = 'yes'");
  const std::string id = c->next_id();
  c->send({{"op", "exec"}, {"id", id}, {"language", "python"}, {"code", "while True:\n    pass"}});
  ASSERT_FALSE(c->wait_for([&](const json& e) { return e.value("event", "") == "active_line" && e["id"] == id; }, 10s)
                   .is_null());
  c->send({{"op", "interrupt"}, {"id", id}});
  auto r = c->collect(id, 10s);
  EXPECT_EQ("interrupted", r.done.value("status", "")) << r.done.dump();
  EXPECT_NE(std::string::npos, r.err.find("KeyboardInterrupt"));
  // The user's frame only: the driver's SIGINT handler, which raised it, is left out (and its host path with it).
  EXPECT_NE(std::string::npos, r.err.find(", in <module>")) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find("python_driver")) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find("_on_sigint")) << r.err;
  EXPECT_EQ("'yes'\n", c->run("python", "kept").out);
  for (const auto& e : c->events()) EXPECT_NE("executor_restarted", e.value("event", ""));
}

TEST_P(ExecutorTest, InterruptStopsShellLoopAndKillsItsBackgroundJob) {
  auto c = start();
  c->run("shell", "KEPT=yes");
  const std::string id = c->next_id();
  c->send({{"op", "exec"}, {"id", id}, {"language", "shell"},
           {"code", "sleep 1000 &\necho $! > bg.pid\necho started\nwhile true; do :; done"}});
  ASSERT_FALSE(c->wait_for([&](const json& e) { return e.value("event", "") == "output" && e["id"] == id; }, 10s)
                   .is_null());
  c->send({{"op", "interrupt"}, {"id", id}});
  auto r = c->collect(id, 10s);
  EXPECT_EQ("interrupted", r.done.value("status", "")) << r.done.dump();
  EXPECT_EQ(130, r.done.value("exit_code", -1));
  // Without the cleanup the background sleep would still run (SIGINT is ignored by a non-interactive shell's
  // background jobs); a zombie counts as gone.
  auto check = c->run("shell",
                      "p=$(cat bg.pid); s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); "
                      "if [ -z \"$s\" ] || [ \"$s\" = Z ]; then echo gone; else echo alive; fi; echo $KEPT");
  EXPECT_EQ("gone\nyes\n", check.out) << check.err;
}

TEST_P(ExecutorTest, PythonAbortRestartsTheExecutor) {
  auto c = start();
  c->run("python", "lost = 1");
  auto r = c->run("python", "import os\nos.abort()");
  EXPECT_EQ("killed", r.done.value("status", "")) << r.done.dump();
  EXPECT_EQ(128 + 6, r.done.value("exit_code", -1));
  auto restarted = c->wait_event("executor_restarted", 10s);
  ASSERT_FALSE(restarted.is_null());
  EXPECT_EQ("python", restarted.value("language", ""));
  EXPECT_NE(std::string::npos, restarted.value("reason", "").find("SIGABRT")) << restarted.dump();
  auto after = c->run("python", "'lost' in globals(), 1 + 1");
  EXPECT_EQ("(False, 2)\n", after.out) << after.err;
}

TEST_P(ExecutorTest, ShellKillNineRestartsTheExecutor) {
  auto c = start();
  auto r = c->run("shell", "kill -9 $$");
  EXPECT_EQ("killed", r.done.value("status", "")) << r.done.dump();
  EXPECT_EQ(137, r.done.value("exit_code", -1));
  EXPECT_FALSE(c->wait_event("executor_restarted", 10s).is_null());
  EXPECT_EQ("fine\n", c->run("shell", "echo fine").out);
}

TEST_P(ExecutorTest, TenMegabytesStreamWithoutDeadlock) {
  auto c = start();
  auto r = c->run("python", "import sys\nfor _ in range(10):\n    sys.stdout.write('x' * 1000000)\n", 120s);
  EXPECT_EQ("ok", r.done.value("status", "")) << r.err;
  EXPECT_EQ(10000000u, r.out.size());
  size_t chunks = 0;
  for (const auto& e : r.events) {
    if (e.value("event", "") != "output") continue;
    ++chunks;
    EXPECT_LE(e.value("data", "").size(), 64u * 1024);
  }
  EXPECT_GT(chunks, 100u);  // streamed in bounded chunks, not one 10 MB event
  EXPECT_EQ(10000000u, c->run("shell", "head -c 10000000 /dev/zero | tr '\\0' y", 120s).out.size());
}

TEST_P(ExecutorTest, WallTimeEndsABlockAsTimeout) {
  auto c = start({"--timeout", "1s"});
  auto start_time = std::chrono::steady_clock::now();
  auto r = c->run("python", "import time\ntime.sleep(60)", 20s);
  EXPECT_EQ("timeout", r.done.value("status", "")) << r.done.dump();
  EXPECT_LT(std::chrono::steady_clock::now() - start_time, 10s);
  EXPECT_EQ("3\n", c->run("python", "1 + 2").out);
}

TEST_P(ExecutorTest, TracebacksComeBackWhole) {
  auto c = start();
  auto r = c->run("python", "def inner():\n    return 1 / 0\n\ninner()");
  EXPECT_EQ("error", r.done.value("status", ""));
  EXPECT_NE(std::string::npos, r.err.find("Traceback (most recent call last)")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("line 4, in <module>")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("line 2, in inner")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("return 1 / 0")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("ZeroDivisionError")) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find("python_driver")) << r.err;  // no driver frames
  auto s = c->run("python", "def broken(:\n  pass");
  EXPECT_NE(std::string::npos, s.err.find("SyntaxError")) << s.err;
  EXPECT_EQ(std::string::npos, s.err.find("python_driver")) << s.err;
  // A chained exception: both tracebacks, the user's frames only.
  auto chained = c->run("python", "try:\n    {}['k']\nexcept KeyError as e:\n    raise ValueError('bad') from e");
  EXPECT_NE(std::string::npos, chained.err.find("KeyError")) << chained.err;
  EXPECT_NE(std::string::npos, chained.err.find("The above exception was the direct cause")) << chained.err;
  EXPECT_NE(std::string::npos, chained.err.find("line 4, in <module>")) << chained.err;
  EXPECT_EQ(std::string::npos, chained.err.find("python_driver")) << chained.err;
}

TEST_P(ExecutorTest, ActiveLinesFollowTheBlock) {
  auto c = start();
  for (const std::string language : {"python", "shell"}) {
    const std::string code = language == "python" ? "import time\ntime.sleep(0.05)\ntime.sleep(0.05)\nx = 1"
                                                  : "sleep 0.05\nsleep 0.05\ntrue\n";
    auto r = c->run(language, code);
    std::vector<int> lines;
    for (const auto& e : r.events) {
      if (e.value("event", "") == "active_line") lines.push_back(e.value("line", 0));
    }
    EXPECT_GE(lines.size(), 3u) << language;
    EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end())) << language;
    EXPECT_EQ("", r.out) << language << ": active lines must not change the output";
  }
}

TEST_P(ExecutorTest, StdinIsEofUnlessGiven) {
  auto c = start();
  auto eof = c->run("python", "input()");
  EXPECT_EQ("error", eof.done.value("status", ""));
  EXPECT_NE(std::string::npos, eof.err.find("EOFError"));
  c->send({{"op", "exec"}, {"id", "in1"}, {"language", "python"}, {"code", "print(input().upper())"},
           {"stdin", "hello\n"}});
  EXPECT_EQ("HELLO\n", c->collect("in1", 20s).out);
  c->send({{"op", "exec"}, {"id", "in2"}, {"language", "shell"}, {"code", "wc -l; read x || echo eof"},
           {"stdin", "a\nb\n"}});
  EXPECT_EQ("2\neof\n", c->collect("in2", 20s).out);
  EXPECT_EQ("", c->run("shell", "cat").out);  // no hang: EOF
}

TEST_P(ExecutorTest, BadRequestsGetErrorsAndTheSessionGoesOn) {
  auto c = start();
  c->send_raw("this is not json");
  EXPECT_FALSE(c->wait_event("error", 10s).is_null());
  c->send({{"op", "exec"}, {"id", "u"}, {"language", "cobol"}, {"code", "x"}});
  auto unknown = c->wait_for([](const json& e) { return e.value("event", "") == "error" && e.value("id", "") == "u"; },
                             10s);
  EXPECT_NE(std::string::npos, unknown.value("message", "").find("cobol"));
  c->send({{"op", "frobnicate"}});
  c->send({{"op", "interrupt"}, {"id", "nope"}});
  EXPECT_EQ("ok\n", c->run("shell", "echo ok").out);
  c->send({{"op", "shutdown"}});
  EXPECT_EQ(0, c->finish());
}

TEST_P(ExecutorTest, ResetRestartsOneExecutor) {
  auto c = start();
  c->run("python", "gone = 1");
  c->send({{"op", "reset"}, {"language", "python"}});
  auto e = c->wait_event("executor_restarted", 10s);
  EXPECT_EQ("reset", e.value("reason", ""));
  EXPECT_EQ("False\n", c->run("python", "'gone' in globals()").out);
}

TEST_P(ExecutorTest, PolicyDenialArrivesBeforeDone) {
  auto c = start();
  // A new user namespace: denied inside the sandbox (seccomp `namespaces` set, EPERM, reported as `denied`);
  // allowed on the host (--sandbox none), the neighbour that shows the block itself works.
  auto r = c->run("shell", "unshare -U true; echo rc=$?; sleep 0.3");
  const auto events = c->events();
  size_t done_at = events.size(), denied_at = events.size();
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].value("event", "") == "done" && events[i].value("id", "") == r.done.value("id", "x")) done_at = i;
    if (events[i].value("event", "") == "denied" && events[i].value("syscall", "") == "unshare") denied_at = i;
  }
  if (GetParam() == "none") {
    EXPECT_EQ("rc=0\n", r.out) << r.err;
    EXPECT_EQ(events.size(), denied_at);
  } else {
    EXPECT_EQ("rc=1\n", r.out) << r.err;
    ASSERT_LT(denied_at, events.size()) << "no denied event";
    EXPECT_LT(denied_at, done_at);
    EXPECT_EQ("EPERM", events[denied_at].value("errno", ""));
  }
}

// A block sent right behind `reset` runs in the new process: without the wait it went to the one being killed and
// ended as `killed`.
TEST_P(ExecutorTest, ABlockRightAfterResetRunsInTheNewExecutor) {
  auto c = start();
  ASSERT_EQ("ok", c->run("python", "x = 1").done.value("status", ""));
  c->send({{"op", "reset"}, {"language", "python"}});
  auto after = c->run("python", "print('x' in globals())");
  EXPECT_EQ("ok", after.done.value("status", "")) << after.done.dump() << after.err;
  EXPECT_EQ("False\n", after.out);
}

INSTANTIATE_TEST_SUITE_P(Modes, ExecutorTest, ::testing::Values("none", "openshell"),
                         [](const auto& info) { return info.param == "none" ? "NoSandbox" : "Sandbox"; });

}  // namespace
}  // namespace oishell::test
