// Other processes and the environment: the host's processes are neither visible nor reachable, nothing of the
// host environment enters, and nothing started inside outlives the sandbox (or oishell, even SIGKILLed).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>
#include <string>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  while (::nanosleep(&ts, &ts) != 0) {}
}

// The cgroups a SIGKILLed oishell (pid `pid`) could not remove: ResourceLimits names them oishell-PID-N, under
// /sys/fs/cgroup/<controller>/ (possibly nested below the cgroup oishell ran in). Removes them; returns how many.
int remove_cgroups_of(pid_t pid) {
  const std::string prefix = "oishell-" + std::to_string(pid) + "-";
  int removed = 0;
  std::error_code ec;
  std::vector<std::filesystem::path> found;
  for (auto it = std::filesystem::recursive_directory_iterator("/sys/fs/cgroup", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 4) it.disable_recursion_pending();
    if (it->is_directory(ec) && it->path().filename().string().rfind(prefix, 0) == 0) found.push_back(it->path());
  }
  for (const auto& path : found) removed += ::rmdir(path.c_str()) == 0 ? 1 : 0;
  return removed;
}

// A host process that waits to be killed.
class HostProcess {
 public:
  HostProcess() : pid_(::fork()) {
    if (pid_ == 0) {
      ::pause();
      _exit(0);
    }
  }
  ~HostProcess() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};

TEST(Processes, HostProcessIsInvisible) {
  SandboxWorkspace w;
  HostProcess host;
  const std::string pid = std::to_string(host.pid());
  EXPECT_EQ("ok", probe_on_host({"stat", "/proc/" + pid}));
  // The sandbox has its own pid namespace and its own /proc: the host pid does not exist there.
  EXPECT_EQ("ENOENT", w.probe({"stat", "/proc/" + pid}));
  EXPECT_EQ("ok", w.probe({"stat", "/proc/self"}));
}

TEST(Processes, SignallingAHostProcess) {
  SandboxWorkspace w;
  HostProcess host;
  const std::string pid = std::to_string(host.pid());
  EXPECT_EQ("ok", probe_on_host({"kill", pid, "0"}));
  EXPECT_EQ("ESRCH", w.probe({"kill", pid, "15"}));
  EXPECT_EQ("ok", w.probe({"kill", "self", "0"}));
  // Still alive: nothing reached it.
  EXPECT_EQ(0, ::kill(host.pid(), 0));
}

TEST(Processes, HostEnvironmentDoesNotEnter) {
  SandboxWorkspace w;
  ::setenv("OPENAI_API_KEY", "sk-oishell-test-not-a-key", 1);
  EXPECT_EQ("sk-oishell-test-not-a-key", probe_on_host({"getenv", "OPENAI_API_KEY"}));
  EXPECT_EQ("<unset>", w.probe({"getenv", "OPENAI_API_KEY"}));
  // What the policy sets does enter.
  EXPECT_EQ("visible", w.probe({"getenv", "OISHELL_TEST_VAR"}, {"--env", "OISHELL_TEST_VAR=visible"}));
  // Sandbox init (a copy of the supervisor, which has the key in its environment) cannot be read.
  EXPECT_EQ("EACCES", w.probe({"cat", "/proc/1/environ"}));
  SandboxRun run = run_sandboxed(w.args(), {"/bin/sh", "-c", "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'"});
  EXPECT_EQ(std::string::npos, run.out.find("sk-oishell-test-not-a-key")) << run.out;
  ::unsetenv("OPENAI_API_KEY");
}

// Whatever the caller of oishell ignores (a shell's `trap ''`, nohup) or catches, every process inside starts with
// default dispositions and nothing blocked: init starts it with vfork semantics and no rt_sigaction in the child
// (runtime/inside/process_spawn.h), so this is what proves init dropped every inherited disposition first.
TEST(Processes, CommandsStartWithDefaultSignalDispositions) {
  SandboxWorkspace w;
  // cat catches nothing itself (grep, for one, catches SIGSEGV).
  auto signal_lines = [](const std::string& status) {
    std::string lines;
    for (const char* field : {"SigBlk:", "SigIgn:", "SigCgt:"}) {
      size_t at = status.find(std::string("\n") + field);
      lines += at == std::string::npos ? std::string(field) + " <absent>\n"
                                       : status.substr(at + 1, status.find('\n', at + 1) - at);
    }
    return lines;
  };
  const std::string ignore_some = "trap '' INT QUIT USR2 PIPE; ";
  // The neighbour: outside, the ignored signals are inherited through exec (bits 2, 3, 12, 13: 0x1806), with
  // whatever this runner ignores already (a runner started from python ignores SIGXFSZ, say).
  unsigned long long runner_ignores = 0;
  {
    std::ifstream self("/proc/self/status");
    for (std::string line; std::getline(self, line);) {
      if (line.rfind("SigIgn:", 0) == 0) runner_ignores = std::stoull(line.substr(7), nullptr, 16);
    }
  }
  char expected_ignored[17];
  std::snprintf(expected_ignored, sizeof expected_ignored, "%016llx", runner_ignores | 0x1806ULL);
  SandboxRun host = run_on_host({"/bin/sh", "-c", ignore_some + "exec /bin/cat /proc/self/status"});
  EXPECT_EQ("SigBlk:\t0000000000000000\nSigIgn:\t" + std::string(expected_ignored) +
                "\nSigCgt:\t0000000000000000\n",
            signal_lines(host.out));
  std::string oishell = std::string("exec '") + oishell_bin() + "' run";
  for (const auto& arg : w.args()) oishell += " '" + arg + "'";
  SandboxRun inside = run_on_host({"/bin/sh", "-c", ignore_some + oishell + " -- /bin/cat /proc/self/status"});
  EXPECT_EQ(0, inside.status) << inside.err;
  EXPECT_EQ("SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\n",
            signal_lines(inside.out))
      << inside.err;
}

// An environment larger than a unix socket's packet (here 400 KB in four variables, each under exec's 128 KiB per
// string) reaches the command whole: the spawn request travels in a sealed memfd (runtime/fd_passing.h).
TEST(Processes, ALargeEnvironmentReachesTheCommandWhole) {
  SandboxWorkspace w;
  const std::string value(100000, 'v');
  std::vector<std::string> args = w.args();
  for (int i = 1; i <= 4; ++i) args.insert(args.end(), {"--env", "LARGE" + std::to_string(i) + "=" + value});
  SandboxRun r = run_sandboxed(args, {"/bin/sh", "-c", "echo ${#LARGE1} ${#LARGE2} ${#LARGE3} ${#LARGE4}; "
                                                       "[ \"$LARGE4\" = \"$LARGE1\" ] && echo same"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("100000 100000 100000 100000\nsame\n", r.out) << r.err;
  // The neighbour: a small one, inline.
  SandboxRun small = run_sandboxed(w.args({"--env", "SMALL=1"}), {"/bin/sh", "-c", "echo $SMALL"});
  EXPECT_EQ("1\n", small.out) << small.err;
}

TEST(Processes, DaemonisedOrphanDiesWithTheSandbox) {
  SandboxWorkspace w;
  const std::string beat = w.ws() + "/beat";
  // The daemon (double fork, own session) beats every 50 ms; the probe returns once it has beaten.
  EXPECT_EQ("ok", w.probe({"daemonize", beat}));
  sleep_ms(200);
  const std::string first = SandboxWorkspace::read(beat);
  ASSERT_FALSE(first.empty());
  sleep_ms(400);
  EXPECT_EQ(first, SandboxWorkspace::read(beat)) << "the daemon still runs after oishell returned";
}

TEST(Processes, KillingOishellKillsTheSandbox) {
  SandboxWorkspace w;
  const std::string beat = w.ws() + "/beat";
  std::vector<std::string> argv = {oishell_bin(), "run"};
  for (const auto& a : w.args({"--ro", std::string(probe_bin()).substr(0, std::string(probe_bin()).rfind('/'))})) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), {"--", probe_bin(), "heartbeat", beat});
  std::vector<char*> args;  // made before the fork: the child only makes async-signal-safe calls
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t oishell = ::fork();
  ASSERT_GE(oishell, 0);
  if (oishell == 0) {
    int null_fd = ::open("/dev/null", O_RDWR);
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);
    ::execv(args[0], args.data());
    _exit(127);
  }
  bool beating = false;
  for (int i = 0; i < 500 && !beating; ++i) {
    sleep_ms(20);
    beating = !SandboxWorkspace::read(beat).empty();
  }
  EXPECT_TRUE(beating) << "the sandboxed heartbeat never started";
  ASSERT_EQ(0, ::kill(oishell, SIGKILL));
  int status = 0;
  ASSERT_EQ(oishell, ::waitpid(oishell, &status, 0));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  sleep_ms(300);  // PDEATHSIG is immediate; give the kernel time to tear the pid namespace down
  const std::string after_kill = SandboxWorkspace::read(beat);
  sleep_ms(400);
  EXPECT_EQ(after_kill, SandboxWorkspace::read(beat)) << "the sandbox outlived oishell";
  // Nor do its cgroups (when it could make any): the janitor removed them once init had died.
  EXPECT_EQ(0, remove_cgroups_of(oishell)) << "cgroups of the killed oishell were left behind";
}

}  // namespace
}  // namespace oishell::test
