// oishell in a container (issue 19): the Localhost seccomp profile the project ships
// (deploy/kubernetes/seccomp/oishell.json) lets oishell build its whole sandbox, with every guarantee still holding
// inside, while the container runtimes' default profile, which it extends, does not, and oishell then says why and
// which profile fixes it. The profile is applied to oishell as a container runtime applies it to a container
// without capabilities (container/oci_seccomp_exec.cc), so this runs as root and as an ordinary user alike.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

const std::string kProfile = OISHELL_CONTAINER_PROFILE;

std::vector<std::string> under(const std::vector<std::string>& profile_args, std::vector<std::string> command) {
  std::vector<std::string> argv = {OCI_SECCOMP_EXEC, kProfile};
  argv.insert(argv.end(), profile_args.begin(), profile_args.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// The runtime's default: the shipped profile without oishell's entries, with the default's clone rules back.
const std::vector<std::string> kRuntimeDefault = {"--drop", "oishell:", "--add", OISHELL_RUNTIME_DEFAULT_CLONE};

TEST(ContainerProfile, OishellBuildsItsSandboxUnderTheShippedProfileAndItsGuaranteesHold) {
  TempDir workspace;
  const std::string script =
      "echo inside > note && cat note; "
      "(echo x > /usr/oishell-escape) 2>/dev/null || echo usr-refused; "
      "cat /proc/self/status | grep -c '^Seccomp:.*2' ; "
      "unshare -U true 2>/dev/null || echo unshare-refused";
  SandboxRun run = run_on_host(under({}, {oishell_bin(), "run", "--workspace", workspace.path(), "--", "/bin/sh",
                                          "-c", script}));
  ASSERT_EQ(0, run.status) << run.err;
  // The workspace is writable; /usr is not; the sandbox's own filter is on; nested namespaces stay denied inside
  // (the container's profile allows them to oishell, oishell's filter denies them to the code it runs).
  EXPECT_EQ("inside\nusr-refused\n1\nunshare-refused\n", run.out) << run.err;
  EXPECT_EQ("inside\n", SandboxWorkspace::read(workspace.path() + "/note"));
}

TEST(ContainerProfile, TheRuntimesDefaultRefusesOishellWhichSaysWhatFixesIt) {
  TempDir workspace;
  SandboxRun run = run_on_host(under(kRuntimeDefault, {oishell_bin(), "run", "--workspace", workspace.path(), "--",
                                                       "/bin/true"}));
  EXPECT_EQ(126, run.status) << run.out << run.err;
  EXPECT_NE(std::string::npos, run.err.find("clone3(CLONE_NEWUSER|NEWNS|NEWPID): ENOSYS")) << run.err;
  // doctor names the cause, and in a container the profile that fixes it (this machine may itself be one: then the
  // advice names the runtime's flag; on a bare host, the filter the process runs under).
  SandboxRun doctor = run_on_host(under(kRuntimeDefault, {oishell_bin(), "doctor"}));
  const bool names_cause = doctor.out.find("refuses creating namespaces") != std::string::npos;
  const bool names_fix = doctor.out.find("seccomp=/usr/share/oishell/seccomp/oishell.json") != std::string::npos ||
                         doctor.out.find("already runs under a seccomp filter") != std::string::npos;
  EXPECT_TRUE(names_cause && names_fix) << doctor.out << doctor.err;
}

}  // namespace
}  // namespace oishell::test
