// Capabilities end to end: inside `oishell run` every capability set is empty, no_new_privs and seccomp are on,
// and a setuid-root program gains nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

TEST(CapsSandbox, EverySetEmptyAndNoNewPrivs) {
  SandboxWorkspace w;
  for (const char* field : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    EXPECT_EQ("0000000000000000", w.probe({"status_field", field})) << field;
  }
  EXPECT_EQ("1", w.probe({"status_field", "NoNewPrivs"}));
  EXPECT_EQ("2", w.probe({"status_field", "Seccomp"}));  // filter mode
  EXPECT_EQ("0", probe_on_host({"status_field", "NoNewPrivs"}));
}

TEST(CapsSandbox, SetuidProgramGainsNothing) {
  SandboxWorkspace w;
  // /usr/bin/su is setuid root; on the host an ordinary user's su runs with euid 0 while it waits for a password.
  if (::geteuid() != 0) {
    EXPECT_EQ("euid 0", probe_on_host({"setuid_exec", "/usr/bin/su", "root", "-c", "true"}));
  }
  EXPECT_EQ("euid same", w.probe({"setuid_exec", "/usr/bin/su", "root", "-c", "true"}));
}

}  // namespace
}  // namespace oishell::test
