// End to end (issue 16), volume: 1,000 requests on one kept-alive terminated connection, and a 1 GiB streamed
// upload through one, with the memory of `oishell run` (the supervisor, whose thread is the relay) bounded. A suite
// of its own (RelayHttpsVolume) so that CI's Landlock-ABI matrix, which repeats the relay enforcement suite, can
// leave it out (Landlock has no part in it).
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include "tests/relay/enforcement/https_fixture.h"

namespace oishell::test {
namespace {

// What the relay may use: its buffers are bounded per connection (1 MiB a direction in the terminator, the
// connection's own queues), so streaming 1 GiB must not show in the supervisor's peak resident size.
constexpr long kMaxRssKib = 64 * 1024;

struct Measured {
  int status = -1;
  std::string err;
  long max_rss_kib = -1;  // the peak resident size of oishell and every process it reaped (wait4's rusage)
  long vm_hwm_kib = -1;   // oishell's own peak (VmHWM), last read just before it exited
};

long vm_hwm_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
  }
  return -1;
}

// `oishell run` of `script`, its stderr read and its peak memory measured; killed after `timeout_seconds`.
Measured run_measured(const std::vector<std::string>& oishell_args, const std::string& script, int timeout_seconds) {
  BackgroundOishell bg = start_oishell(oishell_args, {"/bin/sh", "-c", script});
  Measured m;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  bool open = true;
  while (open) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(bg.pid, SIGKILL);
      m.err += "\n[test: timed out]";
      break;
    }
    long hwm = vm_hwm_kib(bg.pid);  // (zombie: no VmHWM line; the last live reading stays)
    if (hwm > 0) m.vm_hwm_kib = hwm;
    pollfd p{bg.stderr_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(bg.stderr_fd, buf, sizeof buf);
    if (n > 0) {
      m.err.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      open = false;
    }
  }
  ::close(bg.stderr_fd);
  int wstatus = 0;
  rusage usage{};
  while (::wait4(bg.pid, &wstatus, 0, &usage) < 0 && errno == EINTR) {}
  m.status = shell_status(wstatus);
  m.max_rss_kib = usage.ru_maxrss;
  return m;
}

class RelayHttpsVolume : public RelayHttpsFixture {
 protected:
  std::string read_workspace(const std::string& name) {
    std::ifstream in(dir_.path() + "/" + name);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::vector<std::string> args() {
    return {"--policy", policy_, "--workspace", dir_.path(), "--events", events_file()};
  }
};

TEST_F(RelayHttpsVolume, AThousandRequestsOnOneKeptAliveConnection) {
  // curl's URL glob: 1,000 requests, one connection (%{num_connects} is 1 for the first, 0 for the others), each
  // decided and answered in turn. The query keeps the path the rule allows (/bytes/100).
  SandboxRun r = sh("curl -sS -m 50 '" + base_ + "/bytes/100?i=[1-1000]' "
                    "-w '%{stderr}%{http_code} %{num_connects} %{size_download}\\n' 2>&1 >/dev/null | sort | uniq -c");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("    999 200 0 100\n      1 200 1 100\n", r.out) << r.err;
  EXPECT_EQ(1000u, heads_received());
}

TEST_F(RelayHttpsVolume, AGibibyteUploadStreamsWithTheRelaysMemoryBounded) {
  use_rules(api_rule("[GET, HEAD, POST]", R"(["/bytes/**", /count])"));
  // Chunked (the length is not known ahead), no `Expect: 100-continue` wait; the server counts the body's bytes.
  Measured m = run_measured(args(),
                            "head -c 1073741824 /dev/zero | curl -sS -m 55 -H 'Expect:' -T - -X POST " + base_ +
                                "/count -o count.txt -w '%{http_code}\\n' > status.txt",
                            60);
  ASSERT_EQ(0, m.status) << m.err;
  EXPECT_EQ("200\n", read_workspace("status.txt")) << m.err;
  EXPECT_EQ("1073741824", read_workspace("count.txt")) << m.err;
  EXPECT_GT(m.vm_hwm_kib, 0);
  EXPECT_LT(m.vm_hwm_kib, kMaxRssKib) << "oishell's own peak resident size";
  EXPECT_LT(m.max_rss_kib, kMaxRssKib) << "the peak resident size of oishell or a process it reaped";
  std::cout << "[ measured ] peak resident size: oishell " << m.vm_hwm_kib << " KiB, any process of the run "
            << m.max_rss_kib << " KiB\n";
}

}  // namespace
}  // namespace oishell::test
