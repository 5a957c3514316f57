// The sandbox has its own network namespace: the host's loopback listeners and abstract unix sockets are not
// there, Landlock allows TCP connect only to the relay's ports, and host socket files outside the policy's paths
// do not exist inside.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "base/unique_fd.h"
#include "harness.h"
#include "host_servers.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

struct HostUnixListener {
  HostUnixListener(const std::string& name, bool abstract) : fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    size_t offset = abstract ? 1 : 0;
    std::memcpy(addr.sun_path + offset, name.data(), name.size());
    auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + name.size());
    ok = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0 && ::listen(fd.get(), 16) == 0;
  }
  UniqueFd fd;
  bool ok = false;
};

TEST(Network, HostTcpListenerOnIpv4Loopback) {
  SandboxWorkspace w;
  HostTcpListener host;
  ASSERT_TRUE(host.ok());
  const std::string port = std::to_string(host.port());
  EXPECT_EQ("ok", probe_on_host({"connect_tcp", "127.0.0.1", port}));
  // Landlock (TCP connect allowed to the relay ports only) answers before the sandbox's own, empty, loopback would
  // (ECONNREFUSED, below ABI 4): the host's 127.0.0.1 is in another network namespace anyway.
  EXPECT_EQ(landlock_or(4, "EACCES", "ECONNREFUSED"), w.probe({"connect_tcp", "127.0.0.1", port}));
  EXPECT_EQ("ok", w.probe({"connect_tcp", "127.0.0.1", "3128"}));  // the relay's listener
}

TEST(Network, HostTcpListenerOnIpv6Loopback) {
  SandboxWorkspace w;
  HostTcpListener host(/*v6=*/true);
  if (!host.ok()) GTEST_SKIP() << "IPv6 loopback unavailable on the host (bind [::1]: " << strerror(errno) << ")";
  const std::string port = std::to_string(host.port());
  EXPECT_EQ("ok", probe_on_host({"connect_tcp", "::1", port}));
  EXPECT_EQ(landlock_or(4, "EACCES", "ECONNREFUSED"), w.probe({"connect_tcp", "::1", port}));
  EXPECT_EQ("ok", w.probe({"connect_tcp", "::1", "3128"}));
}

// The Landlock cap really leaves rules out: from ABI 4 no TCP port can be bound inside (EACCES); below it a server
// inside works, and is still reachable from nowhere but the sandbox (its own network namespace).
TEST(Network, TcpServersInsideOnlyBelowLandlockAbi4) {
  SandboxWorkspace w;
  EXPECT_EQ(landlock_or(4, "EACCES", "ok"), w.probe({"serve_tcp", "8080"}));
  // The neighbour: the relay's port is connectable at every ABI.
  EXPECT_EQ("ok", w.probe({"connect_tcp", "127.0.0.1", "3128"}));
}

TEST(Network, NoNetworkModeHasNoRelayEither) {
  SandboxWorkspace w;
  HostTcpListener host;
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(landlock_or(4, "EACCES", "ECONNREFUSED"),
            w.probe({"connect_tcp", "127.0.0.1", std::to_string(host.port())}, {"--net", "none"}));
  EXPECT_EQ(landlock_or(4, "EACCES", "ECONNREFUSED"), w.probe({"connect_tcp", "127.0.0.1", "3128"}, {"--net", "none"}));
  EXPECT_EQ("ok", w.probe({"self_unix", "@oishell-test-own"}, {"--net", "none"}));
}

// `lo` has 127.0.0.2 as well in proxy mode, so that getaddrinfo's AI_ADDRCONFIG counts IPv4 as configured and asks
// the DNS stub (runtime/inside/netns.h); with no network at all it has only 127.0.0.1, as a host without a network
// has, and such a lookup fails at once.
TEST(Network, AddrconfigLookupsSeeIpv4OnlyWhenTheSandboxHasANetwork) {
  SandboxWorkspace w;
  const std::string lookup =
      "import socket\n"
      "try:\n"
      "    print(socket.getaddrinfo('localhost', 80, socket.AF_INET, socket.SOCK_STREAM, 0, socket.AI_ADDRCONFIG)[0][4])\n"
      "except socket.gaierror as e:\n"
      "    print('EAI_NONAME' if e.errno == socket.EAI_NONAME else e)\n";
  SandboxRun proxy = run_sandboxed(w.args(), {"/usr/bin/python3", "-c", lookup});
  EXPECT_EQ("('127.0.0.1', 80)\n", proxy.out) << proxy.err;
  SandboxRun none = run_sandboxed(w.args({"--net", "none"}), {"/usr/bin/python3", "-c", lookup});
  EXPECT_EQ("EAI_NONAME\n", none.out) << none.err;
}

// A terminating rule's secret that cannot be read stops the sandbox from starting (issue 16): it never starts with
// the credential missing, its placeholder sent to the host as it is.
TEST(Network, ATerminatingRuleWhoseSecretIsMissingDoesNotStart) {
  SandboxWorkspace w;
  TempDir dir;
  const std::string policy = dir.write(
      "terminate.yaml",
      "version: 1\nextends: default\nnetwork:\n  allow:\n    - {host: api.example.com, tls: terminate, methods: [GET], "
      "credentials: [{name: api, env: API_TOKEN, from_env: OISHELL_TEST_ABSENT_SECRET}]}\n");
  ::unsetenv("OISHELL_TEST_ABSENT_SECRET");
  SandboxRun refused = run_on_host({oishell_bin(), "run", "--policy", policy, "--workspace", w.ws(), "--", "/bin/true"});
  EXPECT_EQ(126, refused.status) << refused.err;
  EXPECT_NE(std::string::npos, refused.err.find("credential api: its secret could not be read from oishell's variable "
                                                "OISHELL_TEST_ABSENT_SECRET (it is not set)"))
      << refused.err;
  // The neighbour: with the secret there, it starts, and the sandbox holds only the placeholder.
  ::setenv("OISHELL_TEST_ABSENT_SECRET", "present-s3cret", 1);
  SandboxRun ok = run_on_host({oishell_bin(), "run", "--policy", policy, "--workspace", w.ws(), "--", "/bin/sh", "-c",
                               "echo \"$API_TOKEN\" | cut -c1-16"});
  ::unsetenv("OISHELL_TEST_ABSENT_SECRET");
  EXPECT_EQ(0, ok.status) << ok.err;
  EXPECT_EQ("oishell-cred-api\n", ok.out) << ok.err;
}

TEST(Network, HostAbstractUnixSocket) {
  SandboxWorkspace w;
  const std::string name = "oishell-test-" + std::to_string(::getpid());
  HostUnixListener host(name, true);
  ASSERT_TRUE(host.ok);
  EXPECT_EQ("ok", probe_on_host({"connect_abstract", name}));
  // Abstract names belong to the network namespace: the host's is not found.
  EXPECT_EQ("ECONNREFUSED", w.probe({"connect_abstract", name}));
  EXPECT_EQ("ok", w.probe({"self_unix", "@" + name + "-inside"}));
}

TEST(Network, HostPathUnixSocket) {
  SandboxWorkspace w;
  const std::string path = w.outside() + "/host.sock";
  HostUnixListener host(path, false);
  ASSERT_TRUE(host.ok);
  EXPECT_EQ("ok", probe_on_host({"connect_unix", path}));
  // Not in the policy's paths, so not in the sandbox's tree.
  EXPECT_EQ("ENOENT", w.probe({"connect_unix", path}));
  EXPECT_EQ("ok", w.probe({"self_unix", w.ws() + "/inside.sock"}));
}

}  // namespace
}  // namespace oishell::test
