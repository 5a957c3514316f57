// End to end (issue 16), volume: 1,000 requests on one kept-alive terminated connection, and a 1 GiB streamed
// upload through one, with the memory of `oishell run` (the supervisor, whose thread is the relay) bounded. A suite
// of its own (RelayHttpsVolume) so that CI's Landlock-ABI matrix, which repeats the relay enforcement suite, can
// leave it out (Landlock has no part in it).
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/relay/enforcement/https_fixture.h"

namespace oishell::test {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// 1 GiB; 128 MiB in the ASan build, where the relay is about eight times slower (the 1 GiB runs in the normal one).
constexpr uint64_t kUploadBytes = kSanitized ? uint64_t{128} << 20 : uint64_t{1} << 30;
// What the relay may use: its buffers are bounded per connection (1 MiB a direction in the terminator, the
// connection's own queues), so streaming the upload must not show in the supervisor's peak resident size: it may
// exceed that of a 1 KiB upload by 16 MiB at most (about 2 MiB measured), and stay below 64 MiB (about 15 MiB
// measured; ASan's shadow and quarantine make that 95 MiB there, so only the growth is checked).
constexpr long kMaxGrowthKib = 16 * 1024;
constexpr long kMaxRssKib = 64 * 1024;

// In the ASan build: ASan keeps freed memory in a quarantine of 256 MiB by default, which streaming fills; 4 MiB
// for the oishell started while this lives (it reads ASAN_OPTIONS when it starts).
class SmallAsanQuarantine {
 public:
  SmallAsanQuarantine() {
    if (!kSanitized) return;
    const char* old = ::getenv("ASAN_OPTIONS");
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    ::setenv("ASAN_OPTIONS", (old_ + (old_.empty() ? "" : ":") + "quarantine_size_mb=4").c_str(), 1);
  }
  ~SmallAsanQuarantine() {
    if (!kSanitized) return;
    if (had_) {
      ::setenv("ASAN_OPTIONS", old_.c_str(), 1);
    } else {
      ::unsetenv("ASAN_OPTIONS");
    }
  }
  SmallAsanQuarantine(const SmallAsanQuarantine&) = delete;
  SmallAsanQuarantine& operator=(const SmallAsanQuarantine&) = delete;

 private:
  std::string old_;
  bool had_ = false;
};

struct Measured {
  int status = -1;
  std::string err;
  long max_rss_kib = -1;  // the peak resident size of oishell and every process it reaped (wait4's rusage)
  long vm_hwm_kib = -1;   // oishell's own peak (VmHWM), sampled every 100 ms: the last reading before it exited
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
  SmallAsanQuarantine quarantine;
  // Chunked (the length is not known ahead), no `Expect: 100-continue` wait; the server counts the body's bytes.
  auto upload = [&](uint64_t bytes) {
    return run_measured(args(),
                        "head -c " + std::to_string(bytes) + " /dev/zero | curl -sS -m 55 -H 'Expect:' -T - -X POST " +
                            base_ + "/count -o count.txt -w '%{http_code}\\n' > status.txt",
                        60);
  };
  Measured small = upload(1024);
  ASSERT_EQ(0, small.status) << small.err;
  EXPECT_EQ("1024", read_workspace("count.txt")) << small.err;

  Measured m = upload(kUploadBytes);
  ASSERT_EQ(0, m.status) << m.err;
  EXPECT_EQ("200\n", read_workspace("status.txt")) << m.err;
  EXPECT_EQ(std::to_string(kUploadBytes), read_workspace("count.txt")) << m.err;
  std::cout << "[ measured ] peak resident size for " << (kUploadBytes >> 20) << " MiB: oishell " << m.vm_hwm_kib
            << " KiB, any process of the run " << m.max_rss_kib << " KiB; for 1 KiB: oishell " << small.vm_hwm_kib
            << " KiB, any " << small.max_rss_kib << " KiB\n";
  // The growth by wait4's exact figure (oishell's own VmHWM is sampled, and a short run's sample misses its end).
  EXPECT_LT(m.max_rss_kib - small.max_rss_kib, kMaxGrowthKib) << "the peak of oishell or a process it reaped";
  EXPECT_GT(m.vm_hwm_kib, 0);
  if (!kSanitized) {
    EXPECT_LT(m.vm_hwm_kib, kMaxRssKib) << "oishell's own peak resident size";
    EXPECT_LT(m.max_rss_kib, kMaxRssKib) << "the peak resident size of oishell or a process it reaped";
  }
}

}  // namespace
}  // namespace oishell::test
