// The sandbox's processes get exactly the caller's CPU set: init runs beside the supervisor on other CPUs during
// the set-up (runtime/outside/init_process.cc) and must hand the caller's set on, never its own set-up placement.
#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>
#include <string>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

std::string cpus_allowed_list(const std::string& status_text) {
  const std::string key = "Cpus_allowed_list:";
  size_t at = status_text.find(key);
  if (at == std::string::npos) return "";
  size_t begin = status_text.find_first_not_of(" \t", at + key.size());
  size_t end = status_text.find('\n', begin);
  return status_text.substr(begin, end - begin);
}

std::string host_cpus() {
  std::ifstream in("/proc/self/status");
  return cpus_allowed_list(std::string(std::istreambuf_iterator<char>(in), {}));
}

std::string sandbox_cpus(const SandboxWorkspace& w) {
  SandboxRun run = run_sandboxed(w.args(), {"/bin/cat", "/proc/self/status"});
  EXPECT_EQ(0, run.status) << run.err;
  return cpus_allowed_list(run.out);
}

TEST(Cpus, TheCommandGetsTheCallersCpuSet) {
  SandboxWorkspace w;
  EXPECT_EQ(host_cpus(), sandbox_cpus(w));

  // A caller confined to one CPU (`taskset -c N oishell run ...`): so is the sandbox, although init ran on
  // another CPU during the set-up whenever the caller had more than one.
  cpu_set_t all;
  ASSERT_EQ(0, ::sched_getaffinity(0, sizeof all, &all));
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(0, ::sched_setaffinity(0, sizeof one, &one));
  const std::string confined = sandbox_cpus(w);
  ASSERT_EQ(0, ::sched_setaffinity(0, sizeof all, &all));
  EXPECT_EQ(std::to_string(first), confined);
}

}  // namespace
}  // namespace oishell::test
