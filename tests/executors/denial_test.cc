// Every denial explained (issue 38): a block that fails on a path the sandbox decided gets an `fs.denied` event that
// names the rule and what would allow it (runtime/executors/denial_explainer.h); a failure the sandbox did not
// cause gets none. The scan of programs' messages is tested on its own first (runtime/executors/denial_scan.h).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/executors/denial_scan.h"
#include "tests/executors/supervisor_client.h"

namespace oishell::test {
namespace {

using executors::PathFailure;
using executors::scan_path_failures;
using nlohmann::json;

std::string describe(const std::vector<PathFailure>& failures) {
  std::string out;
  for (const auto& f : failures) {
    out += f.path + " " + std::to_string(f.error) + (f.writing ? " w" : " r") + "\n";
  }
  return out;
}

TEST(DenialScan, FindsThePathInEachLanguagesMessage) {
  const std::string output =
      "Traceback (most recent call last):\n"
      "  File \"<stdin>\", line 1, in <module>\n"
      "PermissionError: [Errno 13] Permission denied: '/home/u/.ssh/id_rsa'\n"
      "OSError: [Errno 30] Read-only file system: 'out.txt'\n"
      "cat: /srv/data.csv: No such file or directory\n"
      "bash: line 1: /etc/x: Read-only file system\n"
      "sh: 1: cannot create /etc/y: Permission denied\n"
      "touch: cannot touch '/usr/z': Read-only file system\n"
      "mkdir: cannot create directory \u2018/opt/new\u2019: Permission denied\n"
      "Error: EACCES: permission denied, open '/etc/shadow'\n"
      "x.rb:1:in `read': Permission denied @ rb_sysopen - /root/secret (Errno::EACCES)\n"
      "FileNotFoundError: [Errno 2] No such file or directory: \"it's.txt\"\n"
      "all fine here: /etc/passwd\r\n";
  EXPECT_EQ("/home/u/.ssh/id_rsa 13 r\n"
            "out.txt 30 w\n"
            "/srv/data.csv 2 r\n"
            "/etc/x 30 w\n"
            "/etc/y 13 w\n"
            "/usr/z 30 w\n"
            "/opt/new 13 w\n"
            "/etc/shadow 13 r\n"
            "/root/secret 13 r\n"
            "it's.txt 2 r\n",
            describe(scan_path_failures(output)));
}

TEST(DenialScan, IsBoundedAndIgnoresTheRest) {
  EXPECT_TRUE(scan_path_failures("").empty());
  EXPECT_TRUE(scan_path_failures("Permission denied\n").empty());  // no path named
  EXPECT_TRUE(scan_path_failures(std::string(5000, 'a') + " /etc/x: Permission denied\n").empty());  // > 4 KiB line
  std::string many;
  for (int i = 0; i < 100; ++i) many += "cat: /x" + std::to_string(i) + ": Permission denied\n";
  many += many;  // each twice: counted once
  EXPECT_EQ(executors::kMaxFailures, scan_path_failures(many).size());
}

// The real sandbox: a hidden directory in the workspace, the system read-only.
class FsDenied : public ::testing::Test {
 protected:
  std::unique_ptr<SupervisorClient> start(const std::string& mode) {
    const std::string ws = dir_.path();
    std::ofstream(ws + "/notes.txt") << "mine\n";
    ::mkdir((ws + "/secret").c_str(), 0755);
    std::ofstream(ws + "/secret/key") << "k\n";
    const std::string policy = ws + ".policy.yaml";  // beside the workspace, not in it
    policy_ = policy;
    std::ofstream(policy) << "version: 1\nextends: default\nfilesystem:\n  hide: [" << ws << "/secret]\n";
    auto client = std::make_unique<SupervisorClient>(
        std::vector<std::string>{"--sandbox", mode, "--workspace", ws, "--policy", policy});
    EXPECT_TRUE(client->ready().is_object());
    return client;
  }
  void TearDown() override {
    if (!policy_.empty()) ::unlink(policy_.c_str());
  }
  static std::vector<json> denials(const BlockResult& r) {
    std::vector<json> out;
    for (const json& e : r.events) {
      if (e.value("event", "") == "fs.denied") out.push_back(e);
    }
    return out;
  }
  ScratchDir dir_;
  std::string policy_;
};

TEST_F(FsDenied, AFailureOnAPathTheSandboxDecidedIsExplainedAndNoOther) {
  for (const char* abi : {"", "0"}) {
    SCOPED_TRACE(std::string("OISHELL_LANDLOCK_ABI=") + abi);
    if (*abi) ::setenv("OISHELL_LANDLOCK_ABI", abi, 1);
    auto c = start("openshell");
    ::unsetenv("OISHELL_LANDLOCK_ABI");
    const std::string ws = dir_.path();

    // Python reads a hidden file: ENOENT inside, explained as the hide rule.
    auto hidden = c->run("python", "open('" + ws + "/secret/key').read()");
    EXPECT_EQ("error", hidden.done.value("status", "")) << hidden.err;
    EXPECT_NE(std::string::npos, hidden.err.find("FileNotFoundError")) << hidden.err;
    auto d = denials(hidden);
    ASSERT_EQ(1u, d.size()) << hidden.err;
    EXPECT_EQ(ws + "/secret/key", d[0].value("path", ""));
    EXPECT_EQ("read", d[0].value("access", ""));
    EXPECT_EQ("ENOENT", d[0].value("errno", ""));
    EXPECT_EQ("hidden", d[0].value("decision", ""));
    EXPECT_EQ("filesystem.hide", d[0].value("rule", ""));
    EXPECT_NE(std::string::npos, d[0].value("message", "").find("is hidden by the policy (filesystem.hide: " + ws +
                                                                 "/secret)"))
        << d[0].dump();
    // The allowed neighbour: a workspace file reads; a file that is missing in the workspace is the program's own
    // failure, not the sandbox's: no event.
    auto mine = c->run("python", "print(open('notes.txt').read().strip())\nopen('missing.txt')");
    EXPECT_EQ("mine\n", mine.out) << mine.err;
    EXPECT_NE(std::string::npos, mine.err.find("No such file or directory: 'missing.txt'")) << mine.err;
    EXPECT_TRUE(denials(mine).empty()) << mine.err;

    // Python writes outside the workspace: the system is read-only.
    auto outside = c->run("python", "open('/usr/oishell-denial-test', 'w')");
    auto w = denials(outside);
    ASSERT_EQ(1u, w.size()) << outside.err;
    EXPECT_EQ("/usr/oishell-denial-test", w[0].value("path", ""));
    EXPECT_EQ("write", w[0].value("access", ""));
    EXPECT_EQ("read_only", w[0].value("decision", ""));
    EXPECT_EQ("filesystem (system directory)", w[0].value("rule", ""));
    auto written = c->run("python", "open('out.txt', 'w').write('x')");  // the neighbour: the workspace is writable
    EXPECT_EQ("ok", written.done.value("status", "")) << written.err;
    EXPECT_TRUE(denials(written).empty());

    // A shell's cat of a hidden path.
    auto cat = c->run("shell", "cat " + ws + "/secret/key");
    EXPECT_NE(std::string::npos, cat.err.find("No such file or directory")) << cat.err;
    auto s = denials(cat);
    // The same path was explained a moment ago (the Python block): once per window, so the shell's is counted.
    EXPECT_TRUE(s.empty()) << s.size();
    auto cat2 = c->run("shell", "cat " + ws + "/secret/other; cat " + ws + "/notes.txt");
    EXPECT_EQ("mine\n", cat2.out);
    auto s2 = denials(cat2);
    ASSERT_EQ(1u, s2.size()) << cat2.err;
    EXPECT_EQ(ws + "/secret/other", s2[0].value("path", ""));
    EXPECT_EQ("filesystem.hide", s2[0].value("rule", ""));
    // The classic one: a secret in the user's home. The home inside is empty (the policy's home: tmpfs) and the
    // policy hides ~/.ssh besides: named as hidden, whether or not the host has the file (nothing is looked at).
    auto key = c->run("python", "import os\nopen(os.path.expanduser('~/.ssh/id_rsa'))");
    auto k = denials(key);
    ASSERT_EQ(1u, k.size()) << key.err;
    EXPECT_EQ("hidden", k[0].value("decision", "")) << k[0].dump();
    EXPECT_EQ("filesystem.hide", k[0].value("rule", "")) << k[0].dump();
    EXPECT_TRUE(k[0].value("path", "").ends_with("/.ssh/id_rsa")) << k[0].dump();
    // Another file of the home that the policy does not hide: the empty home is what decided, and the advice says
    // how to show it. A file the block makes in the sandbox's own /tmp and then misses is the program's business.
    auto notes = c->run("shell", "cat ~/notes-oishell-test.txt; cat /tmp/never-made-oishell-test");
    auto n = denials(notes);
    ASSERT_EQ(1u, n.size()) << notes.err;
    EXPECT_EQ("scratch", n[0].value("decision", "")) << n[0].dump();
    EXPECT_EQ("filesystem.home", n[0].value("rule", "")) << n[0].dump();
    EXPECT_TRUE(n[0].value("path", "").ends_with("/notes-oishell-test.txt")) << n[0].dump();
    EXPECT_NE(std::string::npos, n[0].value("allow", "").find("home: workspace")) << n[0].dump();
    EXPECT_EQ(0, c->finish());
  }
}

// Without a sandbox nothing is the sandbox's doing: no event, whatever fails.
TEST_F(FsDenied, NoSandboxNoExplanation) {
  auto c = start("none");
  auto r = c->run("shell", "cat /nonexistent-oishell-path/x");
  EXPECT_NE(std::string::npos, r.err.find("No such file or directory")) << r.err;
  EXPECT_TRUE(denials(r).empty());
  EXPECT_EQ(0, c->finish());
}

}  // namespace
}  // namespace oishell::test
