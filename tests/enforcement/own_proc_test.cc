// A masked /proc, as containers have it (Docker and podman by default, Kubernetes with `procMount: Default`): the
// kernel refuses a sandbox a /proc of its own there. With `process.own_proc: required` (the default) the sandbox
// does not start and the message names the fix; with `best_effort` it gets the container's /proc, read-only, and the
// container's other processes stay closed: their environment unreadable (Landlock's ptrace scope), signals unable
// to reach them (pid namespace). Without Landlock (ABI 0) best_effort refuses too.
//
// The "container" is made here: a user, mount and pid namespace with a fresh /proc, then a file of it covered, as
// runtimes cover /proc/kcore and friends, and a neighbour process holding a secret in its environment; oishell then
// runs as uid 1000 of a user namespace below, as a container's user. Where this /proc is masked already (the suite
// run inside such a container, .ci/container-suites), that /proc and its pid numbers are used as they are.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"

namespace oishell::test {
namespace {

// sh -c script: "container" set-up, then its arguments (oishell run ...) as uid 1000 below; the neighbour is
// ended with them.
// $1: the file the neighbour's pid goes to; $2: 1 to mount a fresh /proc for the new pid namespace first; $3: 1 to
// mask it. The neighbour gets pid 5000 where this pid namespace is ours, far from the sandbox's few pids (a
// collision would show as a failure, never as a pass: the sandbox only sends it signal 0).
constexpr const char* kContainer = R"sh(
set -e
pid_file="$1"; fresh="$2"; mask="$3"; shift 3
if [ "$fresh" = 1 ]; then
  mount -t proc -o nosuid,nodev,noexec proc /proc
  echo 4999 > /proc/sys/kernel/ns_last_pid
fi
if [ "$mask" = 1 ]; then mount --bind /dev/null /proc/interrupts; fi
OISHELL_TEST_SECRET=hunter2 sleep 300 </dev/null >/dev/null 2>&1 &
neighbour=$!
echo "$neighbour" > "$pid_file"
status=0
/usr/bin/unshare --user --map-user=1000 --map-group=1000 -- "$@" || status=$?
kill "$neighbour"
exit "$status"
)sh";

// Whether a fresh /proc can be mounted in a new pid namespace here (no masks on this /proc).
bool fresh_proc_possible() {
  SandboxRun r = run_on_host(
      {"/usr/bin/unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc", "/bin/true"});
  return r.status == 0;
}

struct Container {
  TempDir dir;
  std::string pid_file = dir.path() + "/neighbour.pid";

  // `oishell run <oishell_args> -- <command>` inside the "container", its /proc masked unless `mask` is false.
  SandboxRun run(const std::vector<std::string>& oishell_args, const std::vector<std::string>& command,
                 bool mask = true) const {
    const bool fresh = fresh_proc_possible();
    const std::string probe = probe_bin();
    std::vector<std::string> argv = {"/usr/bin/unshare", "--user", "--map-root-user", "--mount"};
    if (fresh) argv.insert(argv.end(), {"--pid", "--fork"});
    argv.insert(argv.end(), {"/bin/sh", "-c", kContainer, "container", pid_file, fresh ? "1" : "0", mask ? "1" : "0",
                             oishell_bin(), "run", "--ro", dir.path(), "--ro", probe.substr(0, probe.rfind('/'))});
    argv.insert(argv.end(), oishell_args.begin(), oishell_args.end());
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return run_on_host(argv);
  }

  // The probe actions against the neighbour, one result per line, run inside the sandbox.
  std::vector<std::string> neighbour_probes() const {
    const std::string probe = probe_bin();
    return {"/bin/sh", "-c",
            "p=$(cat '" + pid_file + "'); "
            "'" + probe + "' open /proc/$p/environ r; "     // the neighbour's secret
            "'" + probe + "' kill $p 0; "                   // a signal to it
            "'" + probe + "' open /proc/$p/cmdline r; "     // listed, with its command line (honest: best effort)
            "'" + probe + "' open /proc/self/environ r; "   // the allowed neighbour: its own
            "'" + probe + "' write /proc/self/comm x; "     // the bound /proc is read-only
            "'" + probe + "' open /proc/interrupts r; "     // its mask came along (/dev/null, nodev here)
            "cat /proc/interrupts | wc -c"};
  }
};

std::string policy_file(const TempDir& dir, const std::string& own_proc) {
  return dir.write("policy.yaml", "version: 1\nextends: default\nprocess:\n  own_proc: " + own_proc + "\n");
}

TEST(OwnProc, RequiredRefusesAMaskedProcAndNamesTheFix) {
  Container c;
  SandboxRun run = c.run({"--policy", policy_file(c.dir, "required")}, {"/bin/true"});
  EXPECT_EQ(126, run.status) << run.err;
  EXPECT_NE(std::string::npos, run.err.find("a /proc of its own")) << run.err;
  EXPECT_NE(std::string::npos, run.err.find("`process: {own_proc: best_effort}`")) << run.err;
  // The neighbour: the same "container" with its /proc unmasked (where this suite can make one).
  if (fresh_proc_possible()) {
    SandboxRun unmasked = c.run({"--policy", policy_file(c.dir, "required")}, {"/bin/true"}, false);
    EXPECT_EQ(0, unmasked.status) << unmasked.err;
  }
}

TEST(OwnProc, BestEffortHasTheContainersProcWithItsProcessesClosed) {
  Container c;
  SandboxRun run = c.run({"--policy", policy_file(c.dir, "best_effort")}, c.neighbour_probes());
  if (sandbox_landlock_abi() == 0) {
    // Without Landlock nothing would keep the neighbour's memory and environment closed: no sandbox.
    EXPECT_EQ(126, run.status) << run.err;
    EXPECT_NE(std::string::npos, run.err.find("Landlock is off")) << run.err;
    return;
  }
  ASSERT_EQ(0, run.status) << run.err;
  EXPECT_NE(std::string::npos, run.err.find("degraded: proc: the container masks parts of /proc")) << run.err;
  EXPECT_EQ("EACCES\nESRCH\nok\nok\nEROFS\nEACCES\n0\n", run.out) << run.err;
}

}  // namespace
}  // namespace oishell::test
