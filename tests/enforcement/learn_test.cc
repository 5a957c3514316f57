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
  for (const std::string& entry : std::vector<std::string>{data + "/input.csv", cache + "   #", "a.example"}) {
    write_text(trimmed, without_lines(policy, entry));
    SandboxRun missing = run(trimmed);
    EXPECT_NE(0, missing.status) << entry << ": " << missing.out;
  }
}

}  // namespace
}  // namespace oishell::test
