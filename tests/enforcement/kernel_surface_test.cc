// Kernel surface: the calls that reach code a sandbox never needs, mostly by autoloading a module (a socket family
// or protocol, a line discipline), or that weaken the process's own hardening (personality). Each denial sits beside
// the allowed call an ordinary program makes.
//
// The denied socket calls are not run on the host: there they would load modules (tipc, sctp, l2tp_ip, smc) into
// the host's kernel. Without the sandbox they succeed where the module exists (socketpair(AF_INET) fails with
// EOPNOTSUPP).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/personality.h>

#include <string>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

TEST(KernelSurface, SocketpairOnlyUnix) {
  SandboxWorkspace w;
  EXPECT_EQ("EPERM", w.probe({"socketpair", "tipc", "seqpacket"}));
  EXPECT_EQ("EPERM", w.probe({"socketpair", "tipc", "stream"}));
  EXPECT_EQ("EPERM", w.probe({"socketpair", "inet", "stream"}));
  EXPECT_EQ("EPERM", w.probe({"socketpair", "inet6", "dgram"}));
  EXPECT_EQ("ok", w.probe({"socketpair", "unix", "stream"}));
  EXPECT_EQ("ok", w.probe({"socketpair", "unix", "seqpacket"}));
}

TEST(KernelSurface, IpProtocolsThatLoadModules) {
  SandboxWorkspace w;
  EXPECT_EQ("EPERM", w.probe({"socket", "inet", "stream", std::to_string(IPPROTO_SCTP)}));
  EXPECT_EQ("EPERM", w.probe({"socket", "inet6", "seqpacket", std::to_string(IPPROTO_SCTP)}));
  EXPECT_EQ("EPERM", w.probe({"socket", "inet", "dgram", "115"}));    // IPPROTO_L2TP
  EXPECT_EQ("EPERM", w.probe({"socket", "inet", "stream", "256"}));   // IPPROTO_SMC
  EXPECT_EQ("EPERM", w.probe({"socket", "inet6", "stream", "262"}));  // IPPROTO_MPTCP (callers fall back to TCP)
  EXPECT_EQ("EPERM", w.probe({"socket", "inet6", "dgram", "1"}));     // ICMP is for AF_INET only
  EXPECT_EQ("EPERM", w.probe({"socket", "inet", "dgram", "58"}));     // and ICMPv6 for AF_INET6
  EXPECT_EQ("EPERM", w.probe({"socket", "inet", "stream", "-1"}));
  // The neighbours: the default protocol, TCP and UDP by number.
  EXPECT_EQ("ok", w.probe({"socket", "inet", "stream", "0"}));
  EXPECT_EQ("ok", w.probe({"socket", "inet", "stream", std::to_string(IPPROTO_TCP)}));
  EXPECT_EQ("ok", w.probe({"socket", "inet6", "stream", std::to_string(IPPROTO_TCP)}));
  EXPECT_EQ("ok", w.probe({"socket", "inet", "dgram", std::to_string(IPPROTO_UDP)}));
  EXPECT_EQ("ok", w.probe({"socket", "inet6", "dgram", "0"}));
}

// Unprivileged ping sockets are allowed by the filter; whether the kernel lets this group ping is its own
// net.ipv4.ping_group_range (in the sandbox's network namespace: nobody, so EACCES), not seccomp's EPERM.
TEST(KernelSurface, PingSocketsAreNotFiltered) {
  SandboxWorkspace w;
  EXPECT_NE("EPERM", w.probe({"socket", "inet", "dgram", std::to_string(IPPROTO_ICMP)}));
  EXPECT_NE("EPERM", w.probe({"socket", "inet6", "dgram", std::to_string(IPPROTO_ICMPV6)}));
}

// A line discipline other than N_TTY autoloads its module (dev.tty.ldisc_autoload), on a pty the sandbox opens
// itself. The probe sets N_TTY, which loads nothing; without the sandbox that works.
TEST(KernelSurface, LineDiscipline) {
  SandboxWorkspace w;
  EXPECT_EQ("ok", probe_on_host({"ldisc", "set"}));
  EXPECT_EQ("EPERM", w.probe({"ldisc", "set"}));
  EXPECT_EQ("ok", w.probe({"ldisc", "get"}));
}

// personality: Linux and Linux32 execution domains (with UNAME26) and the query; the flags that turn off address
// randomisation or make data executable are denied. Without the sandbox every one of these succeeds.
TEST(KernelSurface, Personality) {
  SandboxWorkspace w;
  const std::string current = probe_on_host({"personality", "0xffffffff"});
  ASSERT_EQ(current.rfind("persona 0x", 0), 0u) << current;
  EXPECT_EQ(current, w.probe({"personality", "0xffffffff"}));
  EXPECT_EQ(current, probe_on_host({"personality", std::to_string(ADDR_NO_RANDOMIZE)}));
  EXPECT_EQ("EPERM", w.probe({"personality", std::to_string(ADDR_NO_RANDOMIZE)}));
  EXPECT_EQ("EPERM", w.probe({"personality", std::to_string(READ_IMPLIES_EXEC)}));
  EXPECT_EQ("EPERM", w.probe({"personality", std::to_string(MMAP_PAGE_ZERO)}));
  EXPECT_EQ("EPERM", w.probe({"personality", std::to_string(PER_BSD)}));
  EXPECT_EQ("EPERM", w.probe({"personality", "0xfffffffe"}));
  EXPECT_EQ(current, w.probe({"personality", "0"}));  // PER_LINUX: returns the previous persona
  EXPECT_EQ(current, w.probe({"personality", std::to_string(UNAME26)}));
}

}  // namespace
}  // namespace oishell::test
