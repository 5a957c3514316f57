// `oishell learn` as a user runs it (tools/oishell/cmd_learn.cc): a python script that reads a data file outside the
// workspace, writes into the workspace and into a host directory outside it, calls two loopback names over HTTP and
// runs a subprocess. The learned policy lists exactly those paths and names, passes `validate`, and the script runs
// under it with no denial; removing an entry brings that entry's failure back. Learning never writes the host
// outside the workspace, and what the base hides is reported as wanted, not granted.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "host_servers.h"

namespace oishell::test {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Every line of `text` but those containing `needle`.
std::string without_lines(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find(needle) == std::string::npos) out += line + "\n";
  }
  return out;
}

TEST(Learn, AScriptGetsExactlyWhatItNeedsAndRunsUnderItWithNoDenial) {
  HostTcpServer a("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\na");
  HostTcpServer b("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nb");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  TempDir dir;
  const std::string ws = dir.path() + "/ws", data = dir.path() + "/data", cache = dir.path() + "/cache";
  ASSERT_EQ(0, run_on_host({"/bin/mkdir", "-p", ws, data, cache, dir.path() + "/home/.ssh"}).status);
  write_text(data + "/input.csv", "1,2,3\n");
  write_text(dir.path() + "/home/.ssh/id_test", "secret\n");
  write_text(ws + "/script.py",
             "import os, subprocess, urllib.request\n"
             "print(open('" + data + "/input.csv').read().strip())\n"
             "open('result.txt', 'w').write('ok')\n"
             "open('" + cache + "/c.txt', 'w').write('c')\n"
             "for host, port in (('a.example', " + a.port() + "), ('b.example', " + b.port() + ")):\n"
             "  print(urllib.request.urlopen('http://%s:%s/' % (host, port), timeout=10).read().decode())\n"
             "print(subprocess.run(['/bin/echo', 'sub'], capture_output=True, text=True).stdout.strip())\n"
             // The home's ~/.ssh by its host path ($HOME under /tmp is not used as the home inside).
             "try:\n  open('" + dir.path() + "/home/.ssh/id_test').read()\nexcept OSError as e:\n  print('ssh', e.errno)\n");
  // The base: the default profile with the two names pinned to the host's loopback (hermetic), nothing allowed.
  const std::string base = dir.write("base.yaml", "version: 1\nextends: default\nnetwork:\n"
                                                  "  hosts: {a.example: 127.0.0.1, b.example: 127.0.0.1}\n"
                                                  "  allow_private: [127.0.0.0/8]\n");
  const std::string learned = dir.path() + "/learned.yaml";
  const std::string home = "HOME=" + dir.path() + "/home";
  SandboxRun learn = run_on_host({"/usr/bin/env", home, oishell_bin(), "learn", "--policy", base, "--workspace", ws,
                                  "-o", learned, "--allow-network", "--", "/usr/bin/python3", ws + "/script.py"},
                                 180);
  ASSERT_EQ(0, learn.status) << learn.err;
  const std::string policy = read_text(learned);
  // Exactly those paths and names, each with its comment; the host outside the workspace was not written.
  EXPECT_NE(std::string::npos, policy.find("    - " + data + "/input.csv   # python3: read")) << policy;
  EXPECT_NE(std::string::npos, policy.find("    - " + cache + "   # python3: wrote")) << policy;
  EXPECT_NE(std::string::npos, policy.find("{host: a.example, ports: [" + a.port() + "]}")) << policy;
  EXPECT_NE(std::string::npos, policy.find("{host: b.example, ports: [" + b.port() + "]}")) << policy;
  EXPECT_EQ(std::string::npos, policy.find("    - " + ws)) << policy;  // the workspace needs nothing
  EXPECT_NE(std::string::npos, learn.err.find("wanted, not granted: " + dir.path() + "/home/.ssh/id_test")) << learn.err;
  EXPECT_NE(std::string::npos, policy.find(dir.path() + "/home/.ssh/id_test (hidden by the base)")) << policy;
  EXPECT_EQ("", read_text(cache + "/c.txt"));  // learning wrote a throw-away directory, not the host's
  EXPECT_EQ(0, run_on_host({oishell_bin(), "validate", learned}).status);

  // Under the learned policy: the same output, no denial, the cache written on the host this time.
  const std::string events = dir.path() + "/events.jsonl";
  auto run = [&](const std::string& policy_file) {
    return run_on_host({"/usr/bin/env", home, oishell_bin(), "run", "--policy", policy_file, "--workspace", ws,
                        "--events", events, "--", "/usr/bin/python3", ws + "/script.py"});
  };
  SandboxRun ok = run(learned);
  EXPECT_EQ(0, ok.status) << ok.err;
  EXPECT_EQ("1,2,3\na\nb\nsub\nssh 2\n", ok.out) << ok.err;
  EXPECT_EQ(std::string::npos, read_text(events).find("\"event\":\"denied\"")) << read_text(events);
  EXPECT_EQ(std::string::npos, read_text(events).find("\"event\":\"net.denied\"")) << read_text(events);
  EXPECT_EQ("c", read_text(cache + "/c.txt"));

  // Each entry removed brings its failure back.
  const std::string trimmed = dir.path() + "/trimmed.yaml";
  for (const std::string& entry :
       std::vector<std::string>{data + "/input.csv", cache + "   #", "a.example", "b.example"}) {
    write_text(trimmed, without_lines(policy, entry));
    SandboxRun missing = run(trimmed);
    EXPECT_NE(0, missing.status) << entry << ": " << missing.out;
  }
}

// Observing must not weaken what is enforced: under learning, creating a set-user-ID file is still EPERM (the same
// call, openat, is observed and let through otherwise: the notifier applies the deny rule's own conditions), and a
// denied syscall outright (ptrace) is learned, while one denied for its arguments is reported, never allowed.
TEST(Learn, LearningKeepsEveryDenyRule) {
  TempDir dir;
  const std::string ws = dir.path() + "/ws";
  ASSERT_EQ(0, run_on_host({"/bin/mkdir", "-p", ws}).status);
  const std::string out = dir.path() + "/learned.yaml";
  SandboxRun setid = run_on_host({oishell_bin(), "learn", "--workspace", ws, "-o", out, "--", probe_bin(),
                                  "mode_call", "openat", ws + "/setuid", "4755"});
  EXPECT_EQ("EPERM", setid.out.substr(0, setid.out.find('\n'))) << setid.err;
  EXPECT_NE(std::string::npos, setid.err.find("wanted, not granted: syscall openat (setid_files")) << setid.err;
  EXPECT_EQ(std::string::npos, read_text(out).find("allow_syscalls")) << read_text(out);
  // The neighbour: an ordinary mode is created, observed and let through.
  SandboxRun plain = run_on_host({oishell_bin(), "learn", "--workspace", ws, "--", probe_bin(), "mode_call",
                                  "openat", ws + "/plain", "644"});
  EXPECT_EQ("ok", plain.out.substr(0, plain.out.find('\n'))) << plain.err;
}

// A command that fails for a reason of its own still yields a policy, which says the run failed; learning it again
// with --policy FILE widens that file (its lines kept) with what the second workload needed.
TEST(Learn, AFailedRunStillYieldsAPolicyAndLearningAgainWidensIt) {
  TempDir dir;
  const std::string ws = dir.path() + "/ws", one = dir.path() + "/one", two = dir.path() + "/two";
  ASSERT_EQ(0, run_on_host({"/bin/mkdir", "-p", ws, one, two}).status);
  write_text(one + "/a.txt", "a");
  write_text(two + "/b.txt", "b");
  const std::string file = dir.path() + "/learned.yaml";
  SandboxRun first = run_on_host({oishell_bin(), "learn", "--workspace", ws, "-o", file, "--", "/bin/sh", "-c",
                                  "cat " + one + "/a.txt; exit 3"});
  ASSERT_EQ(0, first.status) << first.err;
  EXPECT_NE(std::string::npos, first.err.find("the run failed (exit 3)")) << first.err;
  const std::string before = read_text(file);
  EXPECT_NE(std::string::npos, before.find("the learning run failed (exit 3)")) << before;
  EXPECT_NE(std::string::npos, before.find("    - " + one + "/a.txt   # cat: read")) << before;
  SandboxRun second = run_on_host({oishell_bin(), "learn", "--policy", file, "--workspace", ws, "--", "/bin/cat",
                                   two + "/b.txt"});
  ASSERT_EQ(0, second.status) << second.err;
  EXPECT_NE(std::string::npos, second.err.find("widened " + file)) << second.err;
  const std::string after = read_text(file);
  EXPECT_EQ(0u, after.find(before.substr(0, before.find("filesystem:")))) << after;  // the header is kept
  EXPECT_NE(std::string::npos, after.find("    - " + one + "/a.txt   # cat: read")) << after;
  EXPECT_NE(std::string::npos, after.find("    - " + two + "/b.txt   # cat: read")) << after;
  // `oishell diff` shows what the second run added, and both workloads run under the widened file.
  SandboxRun diff = run_on_host({oishell_bin(), "diff", dir.write("first.yaml", before), file});
  EXPECT_NE(std::string::npos, diff.out.find(two + "/b.txt")) << diff.out << diff.err;
  EXPECT_EQ(0, run_on_host({oishell_bin(), "run", "--policy", file, "--workspace", ws, "--", "/bin/cat",
                            one + "/a.txt", two + "/b.txt"}).status);
}

}  // namespace
}  // namespace oishell::test
