// Nothing outlives a sandbox, whenever it is killed: `oishell run --memory 256MiB -- sleep 5` is SIGKILLed at
// moments spread over its first 50 ms, again and again, and no cgroup it made (`oishell-<pid>-<n>`) may remain in
// any hierarchy (v1 memory and pids, v2) once every process it started is gone. The cgroup janitor removes them
// (runtime/outside/cgroup_janitor.h); without it, or with a moment where a cgroup exists that the janitor does not know,
// a kill in that moment leaves an empty cgroup behind.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "policy/sandbox_spec.h"
#include "runtime/outside/cgroup_fs.h"
#include "runtime/outside/limits.h"

namespace oishell::test {
namespace {

constexpr uint64_t kMemory = 256ull << 20;

void sleep_us(long us) {
  timespec ts{us / 1000000, (us % 1000000) * 1000};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

// The directories oishell (a child of this process, in the same cgroups) makes its cgroups in: its v1 hierarchies'
// and, on v2, the delegated directory that passes memory and pids down, which may be an ancestor of our own (a
// systemd host: system.slice for a scope of it).
std::vector<std::string> cgroup_parents() {
  std::vector<std::string> out;
  const cgroup::OwnCgroups own = cgroup::OwnCgroups::read();
  for (const char* controller : {"memory", "pids"}) {
    if (auto dir = own.v1_dir(controller)) out.push_back(*dir);
  }
  if (auto dir = own.v2_dir()) out.push_back(*dir);
  if (auto parent = cgroup::find_v2_parent(own, {"memory", "pids"}); parent.is_ok() && parent->dir != out.back()) {
    out.push_back(parent->dir);
  }
  return out;
}

// The oishell-<pid>-* directories directly under `parents`.
std::vector<std::string> cgroups_of(pid_t pid, const std::vector<std::string>& parents) {
  const std::string prefix = "oishell-" + std::to_string(pid) + "-";
  std::vector<std::string> found;
  for (const std::string& parent : parents) {
    DIR* dir = ::opendir(parent.c_str());
    if (!dir) continue;
    while (dirent* entry = ::readdir(dir)) {
      if (std::string(entry->d_name).rfind(prefix, 0) == 0) found.push_back(parent + "/" + entry->d_name);
    }
    ::closedir(dir);
  }
  return found;
}

// The same, anywhere below /sys/fs/cgroup (a few levels deep), for all of `pids` at once.
std::vector<std::string> cgroups_anywhere(const std::set<pid_t>& pids) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator("/sys/fs/cgroup", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 5) it.disable_recursion_pending();
    const std::string name = it->path().filename().string();
    if (name.rfind("oishell-", 0) != 0 || !it->is_directory(ec)) continue;
    const pid_t pid = std::atoi(name.c_str() + 8);
    if (pids.count(pid)) found.push_back(it->path().string());
  }
  return found;
}

struct LeakReport {
  int runs = 0;
  int cgroups_at_kill = 0;  // runs where oishell's cgroups existed when it was killed (the janitor had work)
  std::vector<std::string> problems;
  std::string log;
};

// In a child process that is a subreaper (so that init and the janitor, orphaned by the kill, become its children
// and "every process is gone" is a wait): `oishell run --memory 256MiB -- sleep 5`, SIGKILLed after a delay
// spread over 0-50 ms or longer (see below; to its pid, or to its whole process group with `kill_group`); every
// process reaped; no
// cgroup of it left. At least `min_runs`, then more until `seconds` have passed. Leftovers are removed.
LeakReport kill_during_startup(int min_runs, int seconds, bool kill_group) {
  TempDir workspace;
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return {0, 0, {"pipe2 failed"}, ""};
  pid_t helper = ::fork();
  if (helper == 0) {
    ::close(report[0]);
    auto say = [&](const std::string& line) { (void)!::write(report[1], (line + "\n").data(), line.size() + 1); };
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    const std::vector<std::string> parents = cgroup_parents();
    std::set<pid_t> pids;
    // The kills are spread over 0-50 ms, or over twice the time this build takes to make its cgroups when that is
    // longer (a sanitizer build starts several times slower): measured once, on a run killed when they exist.
    long span_us = 50'000;
    {
      BackgroundOishell probe = start_oishell({"--memory", "256MiB"}, {"sleep", "5"}, {}, workspace.path(),
                                              /*capture_stderr=*/false, /*own_group=*/false);
      const auto t0 = std::chrono::steady_clock::now();
      while (cgroups_of(probe.pid, parents).empty() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5)) {
        sleep_us(200);
      }
      const long made_us = static_cast<long>(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
      span_us = std::max(span_us, 2 * made_us);
      ::kill(probe.pid, SIGKILL);
      pids.insert(probe.pid);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (std::chrono::steady_clock::now() < deadline) {
        if (::waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD) break;
        sleep_us(500);
      }
    }
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 1000; ++i) {
      if (i >= min_runs && std::chrono::steady_clock::now() - start > std::chrono::seconds(seconds)) break;
      // A permutation of the 101 steps over 0-span (0, 3.5, 7, ... ms for 50 ms).
      const long delay_us = (i * 7L % 101) * span_us / 100;
      BackgroundOishell run = start_oishell({"--memory", "256MiB"}, {"sleep", "5"}, {}, workspace.path(),
                                            /*capture_stderr=*/false, /*own_group=*/kill_group);
      sleep_us(delay_us);
      const bool had_cgroups = !cgroups_of(run.pid, parents).empty();
      ::kill(kill_group ? -run.pid : run.pid, SIGKILL);
      pids.insert(run.pid);
      say("run " + std::to_string(run.pid) + " " + std::to_string(delay_us) + (had_cgroups ? " cgroups" : ""));
      // Every process of the run gone: oishell, and the orphans this subreaper inherits (init, janitor).
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      for (;;) {
        int status = 0;
        pid_t done = ::waitpid(-1, &status, WNOHANG);
        if (done == run.pid && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
          say("problem oishell " + std::to_string(run.pid) + " ended with status " +
              std::to_string(shell_status(status)) + " before the kill (after " + std::to_string(delay_us) + " us)");
        }
        if (done < 0 && errno == ECHILD) break;
        if (done > 0) continue;
        if (std::chrono::steady_clock::now() > deadline) {
          for (pid_t left : children_of(::getpid())) {  // the subreaper's orphans: init, the janitor
            say("problem process " + std::to_string(left) + " of the run of oishell " + std::to_string(run.pid) +
                " still there 10 s after the kill");
            ::kill(left, SIGKILL);
          }
          while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {}
          break;
        }
        sleep_us(500);
      }
      for (const std::string& left : cgroups_of(run.pid, parents)) {
        say("problem cgroup " + left + " outlived oishell " + std::to_string(run.pid) + ", killed after " +
            std::to_string(delay_us) + " us");
        ::rmdir(left.c_str());
      }
    }
    for (const std::string& left : cgroups_anywhere(pids)) {
      say("problem cgroup " + left + " outlived its oishell");
      ::rmdir(left.c_str());
    }
    ::_exit(0);
  }
  ::close(report[1]);
  LeakReport out;
  if (helper < 0) {
    ::close(report[0]);
    out.problems.push_back("fork failed");
    return out;
  }
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(report[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(report[0]);
  int status = 0;
  while (::waitpid(helper, &status, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.problems.push_back("the helper process ended with status " + std::to_string(shell_status(status)));
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("run ", 0) == 0) {
      ++out.runs;
      if (line.find(" cgroups") != std::string::npos) ++out.cgroups_at_kill;
    } else if (line.rfind("problem ", 0) == 0) {
      out.problems.push_back(line.substr(8));
    }
  }
  out.log = text;
  return out;
}

// Whether oishell can make a cgroup here at all; the reason when it cannot (as `oishell run` would say it).
std::optional<std::string> why_no_cgroup() {
  LimitsSpec spec;
  spec.memory_bytes = kMemory;
  auto limits = ResourceLimits::prepare(spec);
  if (!limits.is_ok()) return "ResourceLimits::prepare failed: " + limits.status().message();
  if (!(*limits)->cgroup_dirs().empty()) {
    (*limits)->teardown();
    return std::nullopt;
  }
  std::string why;
  for (const auto& m : (*limits)->mechanisms()) why += (why.empty() ? "" : "; ") + m;
  return why;
}

std::string summary(const LeakReport& r) {
  std::string s = std::to_string(r.runs) + " runs, cgroups existed at " + std::to_string(r.cgroups_at_kill) +
                  " of the kills; ";
  s += std::to_string(r.problems.size()) + " problems:";
  for (const auto& p : r.problems) s += "\n  " + p;
  return s;
}

TEST(CgroupLeak, OishellSigkilledDuringStartupLeavesNoCgroup) {
  if (auto why = why_no_cgroup()) {
    GTEST_SKIP() << "no cgroup is writable for this user, so oishell makes none (rlimits instead) and none can "
                    "leak: " << *why;
  }
  LeakReport r = kill_during_startup(100, 18, /*kill_group=*/false);
  std::printf("[   INFO   ] %s\n", summary(r).c_str());
  EXPECT_GE(r.runs, 100) << summary(r);
  // Else the kills all fell before the cgroups were made, and the janitor was never tested.
  EXPECT_GT(r.cgroups_at_kill, 0) << summary(r);
  EXPECT_TRUE(r.problems.empty()) << summary(r);
}

// A kill of oishell's whole process group (timeout(1), a job-control kill) must spare the janitor.
TEST(CgroupLeak, ProcessGroupSigkilledDuringStartupLeavesNoCgroup) {
  if (auto why = why_no_cgroup()) {
    GTEST_SKIP() << "no cgroup is writable for this user, so oishell makes none (rlimits instead) and none can "
                    "leak: " << *why;
  }
  LeakReport r = kill_during_startup(30, 3, /*kill_group=*/true);
  std::printf("[   INFO   ] %s\n", summary(r).c_str());
  EXPECT_GE(r.runs, 30) << summary(r);
  EXPECT_GT(r.cgroups_at_kill, 0) << summary(r);
  EXPECT_TRUE(r.problems.empty()) << summary(r);
}

}  // namespace
}  // namespace oishell::test
