// The languages Open Interpreter users expect besides python, shell and javascript: ruby, R, java (JShell) and
// html, end to end through `oishell supervise`, in both modes (--sandbox none, and the real sandbox).
//
// Their interpreters are part of the set-up (tools/dev installs ruby, r-base-core and a JDK): a missing one fails
// these cases with the package to install, instead of passing them untested.
#include <gtest/gtest.h>

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/executors/supervisor_client.h"

namespace oishell::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// A JVM and its JShell take seconds to start; on a loaded machine more.
constexpr auto kJavaBlock = 90s;

bool has_language(const SupervisorClient& c, const std::string& name) {
  const auto& langs = c.ready().value("languages", json::array());
  return std::find(langs.begin(), langs.end(), name) != langs.end();
}

#define ASSERT_HAS_LANGUAGE(c, name, package)                                                                  \
  ASSERT_TRUE(has_language(*(c), name)) << name << " is not offered in this sandbox: install " << package     \
                                        << " (tools/dev does); " << (c)->ready().dump()

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool no_restart(SupervisorClient& c) {
  for (const auto& e : c.events()) {
    if (e.value("event", "") == "executor_restarted" || e.value("event", "") == "executor_exited") {
      ADD_FAILURE() << e.dump();
      return false;
    }
  }
  return true;
}

class LanguageTest : public SupervisorModeTest {
 protected:
  // Sends `code`, waits until its first output (the loop is running), interrupts it and returns its result.
  static BlockResult interrupt_after_output(SupervisorClient& c, const std::string& language, const std::string& code,
                                            std::chrono::milliseconds first_output) {
    const std::string id = c.next_id();
    c.send({{"op", "exec"}, {"id", id}, {"language", language}, {"code", code}});
    EXPECT_FALSE(
        c.wait_for([&](const json& e) { return e.value("event", "") == "output" && e["id"] == id; }, first_output)
            .is_null())
        << language << ": the block printed nothing";
    c.send({{"op", "interrupt"}, {"id", id}});
    return c.collect(id, 20s);
  }
};

TEST_P(LanguageTest, ReadyOffersRubyRJavaAndHtml) {
  auto c = start();
  ASSERT_HAS_LANGUAGE(c, "ruby", "ruby");
  ASSERT_HAS_LANGUAGE(c, "r", "r-base-core");
  ASSERT_HAS_LANGUAGE(c, "java", "openjdk-17-jdk-headless");
  ASSERT_HAS_LANGUAGE(c, "html", "bash");
  const std::map<std::string, json> aliases = {{"r", {"rscript"}}, {"java", {"jshell"}}, {"ruby", {"rb"}}};
  for (const auto& executor : c->ready().value("executors", json::array())) {
    auto it = aliases.find(executor.value("name", ""));
    if (it != aliases.end()) {
      EXPECT_EQ(it->second, executor["aliases"]) << executor.dump();
    }
  }
}

TEST_P(LanguageTest, RubyKeepsStateSeparatesStreamsAndSurvivesErrors) {
  auto c = start();
  ASSERT_HAS_LANGUAGE(c, "ruby", "ruby");
  auto r1 = c->run("ruby", "x = 41\ndef twice(n) = n * 2\nclass Box; def initialize(v) = @v = v; attr_reader :v; end");
  EXPECT_EQ("ok", r1.done.value("status", "")) << r1.err;
  EXPECT_EQ("", r1.out);  // a block that ends with a definition shows no value
  auto r2 = c->run("rb", "puts x + 1\n$stderr.puts 'to stderr'\nputs Box.new(5).v\ntwice(x)");
  EXPECT_EQ("ok", r2.done.value("status", "")) << r2.err;
  EXPECT_EQ("42\n5\n82\n", r2.out);
  EXPECT_EQ("to stderr\n", r2.err);
  auto r3 = c->run("ruby", "def inner = raise(ArgumentError, 'boom')\ninner");
  EXPECT_EQ("error", r3.done.value("status", ""));
  EXPECT_EQ(1, r3.done.value("exit_code", -1));
  EXPECT_NE(std::string::npos, r3.err.find("boom (ArgumentError)")) << r3.err;
  EXPECT_NE(std::string::npos, r3.err.find("<block")) << r3.err;
  EXPECT_EQ(std::string::npos, r3.err.find("ruby_driver")) << r3.err;  // no driver frames
  auto r4 = c->run("ruby", "def broken(");
  EXPECT_EQ("error", r4.done.value("status", ""));
  EXPECT_NE(std::string::npos, r4.err.find("SyntaxError")) << r4.err;
  auto r5 = c->run("ruby", "exit 3");
  EXPECT_EQ("error", r5.done.value("status", ""));
  EXPECT_EQ(3, r5.done.value("exit_code", -1));
  EXPECT_EQ("41\n", c->run("ruby", "x").out);  // the executor survived all of it, with its state
  no_restart(*c);
}

TEST_P(LanguageTest, InterruptStopsRubyLoopAndKeepsState) {
  auto c = start();
  ASSERT_HAS_LANGUAGE(c, "ruby", "ruby");
  c->run("ruby", "kept = 'yes'");
  auto r = interrupt_after_output(*c, "ruby", "puts 'started'\nloop { }", 10s);
  EXPECT_EQ("interrupted", r.done.value("status", "")) << r.done.dump();
  EXPECT_EQ(130, r.done.value("exit_code", -1));
  EXPECT_NE(std::string::npos, r.err.find("Interrupt")) << r.err;
  // A sleep (blocked in a system call) too, and a child process it waits for.
  auto s = interrupt_after_output(*c, "ruby", "puts 'started'\nsystem('sleep 1000')\nsleep 1000", 10s);
  EXPECT_EQ("interrupted", s.done.value("status", "")) << s.done.dump();
  EXPECT_EQ("\"yes\"\n", c->run("ruby", "kept").out);
  no_restart(*c);
}

TEST_P(LanguageTest, RKeepsStateSeparatesStreamsAndSurvivesErrors) {
  auto c = start();
  ASSERT_HAS_LANGUAGE(c, "r", "r-base-core");
  auto r1 = c->run("r", "x <- 41\ntwice <- function(n) n * 2");
  EXPECT_EQ("ok", r1.done.value("status", "")) << r1.err;
  EXPECT_EQ("", r1.out);
  auto r2 = c->run("R", "cat(x + 1, '\\n', sep = '')\nmessage('to stderr')\ntwice(x)\ninvisible(7)");
  EXPECT_EQ("ok", r2.done.value("status", "")) << r2.err;
  EXPECT_EQ("42\n[1] 82\n", r2.out);  // visible values print as at R's prompt; invisible ones do not
  EXPECT_EQ("to stderr\n", r2.err);
  auto r3 = c->run("rscript", "inner <- function() stop('boom')\ninner()\ncat('not reached')");
  EXPECT_EQ("error", r3.done.value("status", ""));
  EXPECT_EQ(1, r3.done.value("exit_code", -1));
  EXPECT_EQ("Error in inner() : boom\n", r3.err);
  EXPECT_EQ("", r3.out);
  auto r4 = c->run("r", "f((");
  EXPECT_EQ("error", r4.done.value("status", ""));
  EXPECT_NE(std::string::npos, r4.err.find("unexpected end of input")) << r4.err;
  auto r5 = c->run("r", "as.integer('a')");
  EXPECT_EQ("ok", r5.done.value("status", "")) << r5.err;  // a warning is shown, not an error
  EXPECT_NE(std::string::npos, r5.err.find("NAs introduced by coercion")) << r5.err;
  EXPECT_EQ("[1] 41\n", c->run("r", "x").out);
  no_restart(*c);
}

TEST_P(LanguageTest, InterruptStopsRLoopAndKeepsState) {
  auto c = start();
  ASSERT_HAS_LANGUAGE(c, "r", "r-base-core");
  c->run("r", "kept <- 'yes'");
  auto r = interrupt_after_output(*c, "r", "cat('started\\n')\nrepeat {}", 20s);
  EXPECT_EQ("interrupted", r.done.value("status", "")) << r.done.dump();
  EXPECT_EQ(130, r.done.value("exit_code", -1));
  auto s = interrupt_after_output(*c, "r", "cat('started\\n')\nSys.sleep(1000)", 20s);
  EXPECT_EQ("interrupted", s.done.value("status", "")) << s.done.dump();
  EXPECT_EQ("[1] \"yes\"\n", c->run("r", "kept").out);
  no_restart(*c);
}

TEST_P(LanguageTest, JavaKeepsStateSeparatesStreamsAndSurvivesErrors) {
  auto c = start();
  ASSERT_HAS_LANGUAGE(c, "java", "openjdk-17-jdk-headless");
  auto r1 = c->run("java", "import java.util.*;\nint x = 41;\nint twice(int n) { return n * 2; }", kJavaBlock);
  EXPECT_EQ("ok", r1.done.value("status", "")) << r1.err;
  EXPECT_EQ("", r1.out);
  auto r2 = c->run("jshell", "System.out.println(x + 1);\nSystem.err.println(\"to stderr\");\ntwice(x)", kJavaBlock);
  EXPECT_EQ("ok", r2.done.value("status", "")) << r2.err;
  EXPECT_EQ("42\n82\n", r2.out);  // the value of a last expression, as jshell shows it
  EXPECT_EQ("to stderr\n", r2.err);
  auto r3 = c->run("java", "void inner() { throw new IllegalStateException(\"boom\"); }\n\ninner();", kJavaBlock);
  EXPECT_EQ("error", r3.done.value("status", ""));
  EXPECT_EQ(1, r3.done.value("exit_code", -1));
  EXPECT_NE(std::string::npos, r3.err.find("java.lang.IllegalStateException: boom")) << r3.err;
  EXPECT_NE(std::string::npos, r3.err.find("at inner(<block 3>:1)")) << r3.err;
  EXPECT_EQ(std::string::npos, r3.err.find("jdk.jshell")) << r3.err;  // no driver or JShell frames
  auto r4 = c->run("java", "String s = 5;\nSystem.out.println(\"not reached\");", kJavaBlock);
  EXPECT_EQ("error", r4.done.value("status", ""));
  EXPECT_NE(std::string::npos, r4.err.find("error: incompatible types")) << r4.err;
  EXPECT_EQ("", r4.out);
  // A class with main, as Java is written outside jshell (and as Open Interpreter's java ran it): main runs.
  auto r5 = c->run("java",
                   "public class Main {\n  public static void main(String[] args) {\n"
                   "    System.out.println(\"main ran, x = \" + 41);\n  }\n}",
                   kJavaBlock);
  EXPECT_EQ("ok", r5.done.value("status", "")) << r5.err;
  EXPECT_EQ("main ran, x = 41\n", r5.out);
  EXPECT_EQ("41\n", c->run("java", "x", kJavaBlock).out);
  no_restart(*c);
}

TEST_P(LanguageTest, InterruptStopsJavaLoopAndKeepsState) {
  auto c = start();
  ASSERT_HAS_LANGUAGE(c, "java", "openjdk-17-jdk-headless");
  c->run("java", "String kept = \"yes\";", kJavaBlock);
  auto r = interrupt_after_output(*c, "java", "System.out.println(\"started\");\nlong i = 0;\nwhile (true) { i++; }",
                                  kJavaBlock);
  EXPECT_EQ("interrupted", r.done.value("status", "")) << r.done.dump();
  EXPECT_EQ(130, r.done.value("exit_code", -1));
  EXPECT_NE(std::string::npos, r.err.find("Interrupted")) << r.err;
  auto s = interrupt_after_output(*c, "java", "System.out.println(\"started\");\nThread.sleep(1000000);", kJavaBlock);
  EXPECT_EQ("interrupted", s.done.value("status", "")) << s.done.dump();
  EXPECT_EQ("\"yes\"\n", c->run("java", "kept", kJavaBlock).out);
  no_restart(*c);
}

TEST_P(LanguageTest, JavaStartIsNotTakenFromTheBlocksWallTime) {
  // The JVM takes seconds to start (more than the 2 s here on this machine); the block's wall time counts from the
  // driver's ready. Before, the first block of a session timed out while the JVM started.
  auto c = start({"--timeout", "2s"});
  ASSERT_HAS_LANGUAGE(c, "java", "openjdk-17-jdk-headless");
  auto r1 = c->run("java", "1 + 1", kJavaBlock);
  EXPECT_EQ("ok", r1.done.value("status", "")) << r1.done.dump() << r1.err;
  EXPECT_EQ("2\n", r1.out);
  auto r2 = c->run("java", "Thread.sleep(60000);", kJavaBlock);  // the neighbour: the wall time still applies
  EXPECT_EQ("timeout", r2.done.value("status", "")) << r2.done.dump();
}

TEST_P(LanguageTest, JavaIsOfferedOnlyWithJshellOnThePath) {
  // A PATH with `java` and `ruby` but no `jshell` (a JRE, as far as the sandbox can tell): ruby is there, java not,
  // and a java block is refused at once, naming both programs.
  const std::string bin = dir_.path() + "/bin";
  ASSERT_EQ(0, ::mkdir(bin.c_str(), 0755));
  for (const char* program : {"java", "ruby"}) {
    std::string target = std::string("/usr/bin/") + program;
    char resolved[4096];
    ASSERT_NE(nullptr, ::realpath(target.c_str(), resolved)) << target << ": install it (tools/dev does)";
    ASSERT_EQ(0, ::symlink(resolved, (bin + "/" + program).c_str()));
  }
  auto c = start({"--env", "PATH=" + bin});
  EXPECT_TRUE(has_language(*c, "ruby")) << c->ready().dump();
  EXPECT_FALSE(has_language(*c, "java")) << c->ready().dump();
  c->send({{"op", "exec"}, {"id", "j"}, {"language", "jshell"}, {"code", "1"}});
  auto e = c->wait_event("error", 10s);
  EXPECT_EQ("j", e.value("id", ""));
  EXPECT_EQ("exec: java is not available in this sandbox (`java` or `jshell` is not on its PATH)",
            e.value("message", ""));
}

TEST_P(LanguageTest, ActiveLinesFollowTheBlock) {
  auto c = start();
  ASSERT_HAS_LANGUAGE(c, "ruby", "ruby");
  ASSERT_HAS_LANGUAGE(c, "r", "r-base-core");
  ASSERT_HAS_LANGUAGE(c, "java", "openjdk-17-jdk-headless");
  const std::pair<std::string, std::string> blocks[] = {
      {"ruby", "sleep 0.1\nsleep 0.1\nsleep 0.1\nnil"},
      {"r", "Sys.sleep(0.1)\nSys.sleep(0.1)\nSys.sleep(0.1)\ninvisible(NULL)"},
      {"java", "Thread.sleep(100);\nThread.sleep(100);\nThread.sleep(100);\nint done = 1;"},
  };
  for (const auto& [language, code] : blocks) {
    auto r = c->run(language, code, kJavaBlock);
    EXPECT_EQ("ok", r.done.value("status", "")) << language << ": " << r.err;
    std::vector<int> lines;
    for (const auto& e : r.events) {
      if (e.value("event", "") == "active_line") lines.push_back(e.value("line", 0));
    }
    EXPECT_GE(lines.size(), 3u) << language;
    EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end())) << language;
    EXPECT_EQ("", r.out) << language << ": active lines must not change the output";
  }
}

TEST_P(LanguageTest, TextIsUtf8EvenInTheCLocale) {
  // Without the drivers' C-locale handling: ruby's inspect gives "h\u00E9", R prints h<U+00E9>, java prints h?.
  auto c = start({"--env", "LANG=C", "--env", "LC_ALL=C"});
  ASSERT_HAS_LANGUAGE(c, "ruby", "ruby");
  ASSERT_HAS_LANGUAGE(c, "r", "r-base-core");
  ASSERT_HAS_LANGUAGE(c, "java", "openjdk-17-jdk-headless");
  EXPECT_EQ("héllo ✓\n\"héllo ✓\"\n", c->run("ruby", "s = 'héllo ✓'\nputs s\ns").out);
  EXPECT_EQ("héllo ✓\n[1] \"héllo ✓\"\n", c->run("r", "s <- 'héllo ✓'\ncat(s, '\\n', sep = '')\ns").out);
  EXPECT_EQ("héllo ✓\n\"héllo ✓\"\n",
            c->run("java", "String s = \"héllo ✓\";\nSystem.out.println(s);\ns", kJavaBlock).out);
}

TEST_P(LanguageTest, InterruptWhileTheJvmStartsEndsTheBlockAndTheNextStartsIt) {
  auto c = start();
  ASSERT_HAS_LANGUAGE(c, "java", "openjdk-17-jdk-headless");
  const std::string id = c->next_id();
  c->send({{"op", "exec"}, {"id", id}, {"language", "java"}, {"code", "int x = 1;"}});
  std::this_thread::sleep_for(300ms);  // the JVM takes seconds to be ready
  c->send({{"op", "interrupt"}, {"id", id}});
  auto r = c->collect(id, 20s);
  // A SIGINT there killed the JVM half-initialised ("Error occurred during initialization of VM"), reported as an
  // executor that did not stop on SIGINT.
  EXPECT_EQ("interrupted", r.done.value("status", "")) << r.done.dump();
  EXPECT_EQ(130, r.done.value("exit_code", -1));
  EXPECT_EQ("interrupted while the java executor started (it was killed)", r.done.value("reason", ""));
  EXPECT_EQ("", r.out + r.err);
  EXPECT_EQ("2\n", c->run("java", "1 + 1", kJavaBlock).out);
}

TEST_P(LanguageTest, HtmlIsSavedInTheWorkspaceAndNamed) {
  auto c = start();
  ASSERT_HAS_LANGUAGE(c, "html", "bash");
  const std::string page = "<!doctype html>\n<h1>Héllo</h1>\n<p>two  spaces, a \\backslash and $HOME</p>\n";
  auto r1 = c->run("html", page);
  EXPECT_EQ("ok", r1.done.value("status", "")) << r1.err;
  const std::string first = dir_.path() + "/oi-html/1.html";
  EXPECT_EQ(page, read_file(first));  // byte for byte: no expansion, no trimming
  EXPECT_NE(std::string::npos, r1.out.find(first)) << r1.out;
  // The next page gets the next number; a file already there is never overwritten.
  { std::ofstream(dir_.path() + "/oi-html/2.html") << "mine"; }
  auto r2 = c->run("htm", "<b>second</b>");
  const std::string third = dir_.path() + "/oi-html/3.html";
  EXPECT_NE(std::string::npos, r2.out.find(third)) << r2.out;
  EXPECT_EQ("<b>second</b>", read_file(third));
  EXPECT_EQ("mine", read_file(dir_.path() + "/oi-html/2.html"));
}

// The start timeout is the supervisor's (the same in both modes): one case, on the host. Half a minute: ruby's bound.
TEST(LanguageStart, ADriverThatNeverGetsReadyIsKilledAtItsStartTimeoutAndOthersGoOn) {
  ScratchDir dir;
  const std::string bin = dir.path() + "/bin";
  ASSERT_EQ(0, ::mkdir(bin.c_str(), 0755));
  {
    std::ofstream ruby(bin + "/ruby");
    ruby << "#!/bin/sh\nexec sleep 1000\n";  // never says R
  }
  ASSERT_EQ(0, ::chmod((bin + "/ruby").c_str(), 0755));
  SupervisorClient c({"--sandbox", "none", "--workspace", dir.path(), "--env", "PATH=" + bin + ":/usr/bin:/bin"});
  ASSERT_TRUE(c.ready().is_object());
  const auto started = std::chrono::steady_clock::now();
  c.send({{"op", "exec"}, {"id", "hangs"}, {"language", "ruby"}, {"code", "1"}});
  // Another language is not held up by it.
  auto quick = c.run("shell", "echo quick", 10s);
  EXPECT_EQ("quick\n", quick.out);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  auto r = c.collect("hangs", 60s);
  EXPECT_EQ("error", r.done.value("status", "")) << r.done.dump();
  EXPECT_EQ("the ruby executor did not start within 30 s and was killed", r.done.value("reason", ""));
  EXPECT_GE(std::chrono::steady_clock::now() - started, 29s);
  auto exited = c.wait_event("executor_exited", 10s);
  EXPECT_EQ("ruby", exited.value("language", "")) << exited.dump();
}

INSTANTIATE_TEST_SUITE_P(Modes, LanguageTest, ::testing::Values("none", "openshell"),
                         [](const auto& info) { return info.param == "none" ? "NoSandbox" : "Sandbox"; });

}  // namespace
}  // namespace oishell::test
