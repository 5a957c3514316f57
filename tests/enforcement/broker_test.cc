// The connect broker (runtime/broker): every connect(2) inside is performed by the supervisor. Pathname unix
// sockets are decided by inode: the sandbox's own (its tmpfs, or bound by a server inside) and `network.unix`
// are connectable; a host service's socket is not, however it became visible (given read-only, in the workspace,
// through a symlink), and a sockaddr rewritten while the connect is pending never reaches it.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "runtime/inside/userns.h"
#include "runtime/sys/syscalls.h"
#include "harness.h"
#include "host_servers.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

// A unix stream server on the host at `path` that writes `reply` to each client, on its own thread, with the
// sockets `pass` (SCM_RIGHTS; the caller keeps them open) when given.
class HostUnixServer {
 public:
  HostUnixServer(const std::string& path, char reply, std::vector<int> pass = {})
      : fd_(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    ok_ = ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd_.get(), 64) == 0;
    if (ok_) {
      thread_ = std::thread([this, reply, pass = std::move(pass)] {
        while (!stop_) {
          int c = ::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
          if (c < 0) continue;
          ucred peer{};
          socklen_t peer_len = sizeof peer;
          if (::getsockopt(c, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) == 0) {
            peer_uid_ = peer.uid;
            peer_gid_ = peer.gid;
          }
          ++accepted_;
          send_reply(c, reply, pass);
          ::close(c);
        }
      });
    }
    path_ = path;
  }
  ~HostUnixServer() {
    stop_ = true;
    if (thread_.joinable()) {
      ::shutdown(fd_.get(), SHUT_RDWR);
      thread_.join();
    }
    ::unlink(path_.c_str());
  }
  bool ok() const { return ok_; }
  int accepted() const { return accepted_; }
  // The uid and gid of the last client (SO_PEERCRED), once accepted() counts it.
  uid_t peer_uid() const { return peer_uid_; }
  gid_t peer_gid() const { return peer_gid_; }
  // Waits (up to 5 s) until the server thread has taken `n` connections: a client's connect returns before the
  // server's accept does.
  int wait_accepted(int n) const {
    for (int i = 0; i < 500 && accepted_ < n; ++i) ::usleep(10'000);
    return accepted_;
  }

 private:
  static void send_reply(int c, char reply, const std::vector<int>& pass) {
    iovec iov{&reply, 1};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    std::vector<char> control(CMSG_SPACE(pass.size() * sizeof(int)));
    if (!pass.empty()) {
      msg.msg_control = control.data();
      msg.msg_controllen = control.size();
      cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN(pass.size() * sizeof(int));
      std::memcpy(CMSG_DATA(cmsg), pass.data(), pass.size() * sizeof(int));
    }
    [[maybe_unused]] ssize_t n = ::sendmsg(c, &msg, MSG_NOSIGNAL);
  }

  UniqueFd fd_;
  bool ok_ = false;
  std::string path_;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::atomic<uid_t> peer_uid_{static_cast<uid_t>(-1)};
  std::atomic<gid_t> peer_gid_{static_cast<gid_t>(-1)};
  std::thread thread_;
};

std::string events_of(const std::string& file) { return SandboxWorkspace::read(file); }

TEST(BrokerUnix, HostSocketGivenReadOnlyIsRefusedWithAnEvent) {
  SandboxWorkspace w;
  const std::string path = w.outside() + "/service.sock";
  HostUnixServer host(path, 'D');
  ASSERT_TRUE(host.ok());
  ASSERT_EQ("ok", probe_on_host({"connect_unix", path}));
  const int accepted_before = host.wait_accepted(1);
  const std::string events = w.path("events.jsonl");
  SandboxRun run = run_sandboxed(w.args({"--ro", path, "--events", events}), {probe_bin(), "connect_unix", path});
  EXPECT_EQ("EACCES\n", run.out) << run.err;
  EXPECT_EQ(accepted_before, host.accepted());  // refused before any connection reached the service
  const std::string log = events_of(events);
  EXPECT_NE(std::string::npos, log.find("\"event\":\"net.denied\"")) << log;
  EXPECT_NE(std::string::npos, log.find("\"protocol\":\"unix\"")) << log;
  EXPECT_NE(std::string::npos, log.find("\"host\":\"" + path + "\"")) << log;
  // The neighbour: a socket on the sandbox's own tmpfs.
  EXPECT_EQ("ok", w.probe({"self_unix", "/tmp/own.sock"}));
}

// A loop inside that keeps making a refused connect does not grow the events log without bound: at most
// Broker::kDenialsPerSecond (20) net.denied events a second, and one more event saying how many were not reported
// one by one (`suppressed`). Before, each of the 300 refusals was an event. The neighbour: every connect is still
// refused (EACCES), and the first ones are reported as before.
TEST(BrokerUnix, RefusalsInALoopAreReportedAtMostTwentyASecond) {
  SandboxWorkspace w;
  const std::string path = w.outside() + "/service.sock";
  HostUnixServer host(path, 'D');
  ASSERT_TRUE(host.ok());
  const std::string events = w.path("events.jsonl");
  const std::string script =
      "import socket, errno\n"
      "refused = 0\n"
      "for i in range(300):\n"
      "  s = socket.socket(socket.AF_UNIX)\n"
      "  try:\n    s.connect('" + path + "')\n  except PermissionError: refused += 1\n"
      "  s.close()\n"
      "print(refused)\n";
  SandboxRun run = run_sandboxed(w.args({"--ro", path, "--events", events}), {"/usr/bin/python3", "-c", script});
  EXPECT_EQ("300\n", run.out) << run.err;
  EXPECT_EQ(0, host.accepted());
  int reported = 0;
  uint64_t suppressed = 0;
  int summaries = 0;
  std::istringstream lines(events_of(events));
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"event\":\"net.denied\"") == std::string::npos) continue;
    if (line.find("\"host\":\"" + path + "\"") != std::string::npos) ++reported;
    if (size_t at = line.find("\"suppressed\":"); at != std::string::npos) {
      ++summaries;
      suppressed += std::stoull(line.substr(at + 13));
    }
  }
  EXPECT_GE(reported, 20);
  EXPECT_LT(reported, 300);
  EXPECT_GE(summaries, 1);
  EXPECT_EQ(300u, reported + suppressed);  // every refusal is either reported or counted
}

TEST(BrokerUnix, ListedSocketIsConnectableAndItsNeighbourIsNot) {
  SandboxWorkspace w;
  const std::string listed = w.outside() + "/listed.sock";
  const std::string other = w.outside() + "/other.sock";
  HostUnixServer listed_server(listed, 'L');
  HostUnixServer other_server(other, 'D');
  ASSERT_TRUE(listed_server.ok());
  ASSERT_TRUE(other_server.ok());
  // Services for every user: the broker connects as the sandbox's outside ids (for a root caller an unused id, and
  // the read-only bind is not id-mapped), so the refusal of `other` is the policy's, not the mode's.
  ASSERT_EQ(0, ::chmod(listed.c_str(), 0666));
  ASSERT_EQ(0, ::chmod(other.c_str(), 0666));
  // --unix is network.unix on the command line; in a policy file the same list is `network: {unix: [...]}`.
  EXPECT_EQ("ok", w.probe({"connect_unix", listed}, {"--ro", w.outside(), "--unix", listed}));
  EXPECT_EQ(1, listed_server.wait_accepted(1));
  EXPECT_EQ("EACCES", w.probe({"connect_unix", other}, {"--ro", w.outside(), "--unix", listed}));
  EXPECT_EQ(0, other_server.accepted());
  // Listed in a policy file, reached through a symlink inside: decided by the inode, not the name.
  ASSERT_EQ(0, ::symlink(listed.c_str(), (w.ws() + "/link.sock").c_str()));
  TempDir dir;
  const std::string policy = dir.write("policy.yaml", "version: 1\nextends: default\nnetwork:\n  unix: [" + listed +
                                                          "]\n");
  SandboxRun run = run_sandboxed({"--policy", policy, "--workspace", w.ws(), "--ro", w.outside()},
                                 {probe_bin(), "connect_unix", "link.sock"});
  EXPECT_EQ("ok\n", run.out) << run.err;
  EXPECT_EQ(2, listed_server.wait_accepted(2));
}

TEST(BrokerUnix, HostServiceSocketInTheWorkspaceIsRefused) {
  SandboxWorkspace w;
  const std::string path = w.ws() + "/dev-server.sock";
  HostUnixServer host(path, 'D');
  ASSERT_TRUE(host.ok());
  EXPECT_EQ("EACCES", w.probe({"connect_unix", path}));
  // A server inside binding in the workspace is the sandbox's own: connectable (by absolute and relative path).
  EXPECT_EQ("ok", w.probe({"self_unix", w.ws() + "/inside.sock"}));
  EXPECT_EQ("ok", w.probe({"self_unix", "relative.sock"}));
}

TEST(BrokerUnix, SymlinkToAHostSocketIsRefused) {
  SandboxWorkspace w;
  const std::string path = w.outside() + "/service.sock";
  HostUnixServer host(path, 'D');
  ASSERT_TRUE(host.ok());
  ASSERT_EQ(0, ::symlink(path.c_str(), (w.ws() + "/link.sock").c_str()));
  EXPECT_EQ("EACCES", w.probe({"connect_unix", w.ws() + "/link.sock"}, {"--ro", path}));
  EXPECT_EQ("EACCES", w.probe({"connect_unix", "link.sock"}, {"--ro", path}));
  // Without the --ro the link dangles inside: the kernel's own answer.
  EXPECT_EQ("ENOENT", w.probe({"connect_unix", w.ws() + "/link.sock"}));
}

TEST(BrokerUnix, RewritingTheAddressDuringTheCallNeverReachesTheOtherSocket) {
  SandboxWorkspace w;
  // d0 is writable inside (the server inside binds there), d1 holds the host's service, given read-only: the two
  // paths are one byte apart.
  ASSERT_EQ(0, ::mkdir(w.path("d0").c_str(), 0755));
  ASSERT_EQ(0, ::mkdir(w.path("d1").c_str(), 0755));
  const std::string mine = w.path("d0/s.sock");
  const std::string other = w.path("d1/s.sock");
  HostUnixServer host(other, 'D');
  ASSERT_TRUE(host.ok());
  ASSERT_EQ("ok", probe_on_host({"connect_unix", other}));  // the other socket is live: reaching it would show
  const int accepted_before = host.wait_accepted(1);
  // Both outcomes must happen (the race is real): some connects read the other path and were refused, some read
  // the sandbox's own. The scheduler decides how often the rewriting thread wins: up to three rounds to see both.
  std::string out;
  int refused = 0;
  for (int round = 0; round < 3; ++round) {
    out = w.probe({"unix_rewrite_race", mine, other, "400"}, {"--rw", w.path("d0"), "--ro", w.path("d1")});
    ASSERT_TRUE(out.starts_with("ok ")) << out;
    refused = std::stoi(out.substr(3, out.find('/') - 3));
    EXPECT_EQ(accepted_before, host.accepted()) << "round " << round << ": " << out;
    if (refused > 0 && refused < 400) break;
  }
  EXPECT_GT(refused, 0) << out;
  EXPECT_LT(refused, 400) << out;
}

// The broker resolves and connects unix sockets with the sandbox's ids and no capabilities
// (runtime/broker/as_sandbox.h), never the supervisor's. Root's sandbox is an unused id outside
// (runtime/inside/userns.h); before, the broker acted as the host's root for it.
class BrokerAsSandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "a root caller's case: an ordinary caller's supervisor has the sandbox's ids already";
    }
  }
};

// A directory in /etc for the duration of a test (the sandbox reads /etc with "other" permissions), removed again.
class EtcDir {
 public:
  explicit EtcDir(mode_t mode) : path_("/etc/oishell-test-broker-" + std::to_string(::getpid())) {
    ::mkdir(path_.c_str(), 0755);
    std::ofstream(path_ + "/file") << "not a socket\n";
    ::chmod(path_.c_str(), mode);
  }
  ~EtcDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A listed socket sees the sandbox's uid and gid as its peer's (SO_PEERCRED), not 0: a service that trusts uid 0
// would otherwise take the sandbox for root. The neighbour: the host's own connect, made by root, shows 0.
TEST_F(BrokerAsSandbox, AListedSocketSeesTheSandboxsIdsNotRoot) {
  SandboxWorkspace w;
  const std::string path = w.outside() + "/listed.sock";
  HostUnixServer server(path, 'L');
  ASSERT_TRUE(server.ok());
  ASSERT_EQ(0, ::chmod(path.c_str(), 0666));  // a service for every user: the sandbox may write to it
  ASSERT_EQ("ok", probe_on_host({"connect_unix", path}));
  ASSERT_EQ(1, server.wait_accepted(1));
  EXPECT_EQ(0u, server.peer_uid());
  EXPECT_EQ("ok", w.probe({"connect_unix", path}, {"--ro", w.outside(), "--unix", path}));
  ASSERT_EQ(2, server.wait_accepted(2));
  auto outside = root_caller_outside_id();
  ASSERT_TRUE(outside.is_ok()) << outside.status().message();
  EXPECT_EQ(*outside, server.peer_uid());
  EXPECT_EQ(*outside, server.peer_gid());
}

// A directory the sandbox cannot search (0700 root, read as "other" inside): stat says EACCES, and so does every
// connect beneath it, whatever is there. Before, the broker resolved the path as root: ENOENT for a missing name,
// ECONNREFUSED for a file, so connect told what stat would not; and a listed socket there was connected. The
// neighbour: the same directory searchable (0755), the kernel's own answers come back.
TEST_F(BrokerAsSandbox, ConnectBeneathAnUnsearchableDirectoryIsNoExistenceOracle) {
  SandboxWorkspace w;
  EtcDir dir(0700);
  const std::string live = dir.path() + "/live.sock";
  HostUnixServer server(live, 'L');
  ASSERT_TRUE(server.ok());
  ASSERT_EQ(0, ::chmod(live.c_str(), 0666));
  EXPECT_EQ("EACCES", w.probe({"stat", dir.path() + "/file"}));
  EXPECT_EQ("EACCES", w.probe({"connect_unix", dir.path() + "/missing"}));
  EXPECT_EQ("EACCES", w.probe({"connect_unix", dir.path() + "/file"}));
  EXPECT_EQ("EACCES", w.probe({"connect_unix", live}, {"--unix", live}));
  EXPECT_EQ(0, server.accepted());
  ASSERT_EQ(0, ::chmod(dir.path().c_str(), 0755));
  EXPECT_EQ("ENOENT", w.probe({"connect_unix", dir.path() + "/missing"}));
  EXPECT_EQ("ECONNREFUSED", w.probe({"connect_unix", dir.path() + "/file"}));
  EXPECT_EQ("ok", w.probe({"connect_unix", live}, {"--unix", live}));
  EXPECT_EQ(1, server.wait_accepted(1));
}

// A server inside sees a client inside as itself (its SO_PEERCRED maps to the sandbox's own uid and gid), on its
// own tmpfs and by an abstract name. Before, a root caller's broker connected as the host's root, which the
// sandbox's user namespace does not map (uid=65534). For an ordinary caller the same holds.
TEST(BrokerUnix, AServerInsideSeesAClientInsideAsItself) {
  SandboxWorkspace w;
  EXPECT_EQ("same", w.probe({"unix_peer_ids", "/tmp/peer.sock"}));
  EXPECT_EQ("same", w.probe({"unix_peer_ids", "@oishell-peer"}));
}

// The sandbox's own tmpfs is found beneath init's root, never a caller's: a first caller with a root of its own
// (a user namespace of its own, then chroot into a directory bound from the host) would otherwise have made that
// host filesystem "the sandbox's own", and every socket on it connectable. Before, the host's service here was
// reached (ok). The neighbour: a socket on the sandbox's own tmpfs is connectable.
TEST(BrokerUnix, ACallersOwnRootNeverNamesTheSandboxsTmpfs) {
  SandboxWorkspace w;
  const std::string path = w.outside() + "/service.sock";
  HostUnixServer host(path, 'D');
  ASSERT_TRUE(host.ok());
  ASSERT_EQ(0, ::chmod(path.c_str(), 0666));
  TempDir dir;
  const std::string policy = dir.write("policy.yaml", "version: 1\nextends: default\nprocess:\n"
                                                      "  nested_namespaces: true\n  allow_syscalls: [chroot]\n");
  const std::vector<std::string> args = {"--policy", policy, "--workspace", w.ws(), "--ro", w.outside()};
  SandboxRun run = run_sandboxed(args, {probe_bin(), "chroot_connect", w.outside(), "/service.sock"});
  EXPECT_EQ("EACCES\n", run.out) << run.err;
  EXPECT_EQ(0, host.accepted());
  run = run_sandboxed(args, {probe_bin(), "self_unix", "/tmp/own.sock"});
  EXPECT_EQ("ok\n", run.out) << run.err;
}

TEST(BrokerLoopback, AThousandParallelConnects) {
  SandboxWorkspace w;
  TempDir dir;
  const std::string policy = dir.write("policy.yaml", "version: 1\nextends: default\nlimits:\n  pids: 4096\n");
  SandboxRun run = run_sandboxed({"--policy", policy, "--workspace", w.ws()},
                                 {probe_bin(), "parallel_connect_tcp", "3128", "1000"}, 120);
  EXPECT_EQ("ok\n", run.out) << run.err;
  // The neighbour: a port Landlock does not allow inside is refused as before (EACCES from ABI 4).
  EXPECT_EQ(landlock_or(4, "EACCES", "ECONNREFUSED"), w.probe({"connect_tcp", "127.0.0.1", "3129"}));
}

// Netlink goes through the broker too, which connects with the supervisor's rights: the supervisor owns the
// sandbox's user namespace, so the kernel's CAP_NET_ADMIN check in the sandbox's network namespace passes for it.
// A NETLINK_ROUTE socket connected to a multicast group (or another socket's port id) could then send forged
// rtnetlink notifications to every listener inside. Refused as the kernel refuses a caller without that capability
// (EPERM), with an event; the neighbour, a socket connected to the kernel (groups 0, port 0), still asks it for its
// links and gets an answer.
TEST(BrokerFamilies, NetlinkToAGroupOrAPortIsRefusedAsForAnUnprivilegedCaller) {
  SandboxWorkspace w;
  const std::string events = w.path("events.jsonl");
  SandboxRun run = run_sandboxed(w.args({"--events", events}), {probe_bin(), "connect_netlink", "1", "0"});
  EXPECT_EQ("EPERM\n", run.out) << run.err;  // RTMGRP_LINK
  EXPECT_EQ("EPERM", w.probe({"connect_netlink", "0", "4242"}));
  EXPECT_EQ("ok", w.probe({"connect_netlink", "0", "0"}));
  const std::string log = events_of(events);
  EXPECT_NE(std::string::npos, log.find("\"event\":\"net.denied\"")) << log;
  EXPECT_NE(std::string::npos, log.find("\"protocol\":\"netlink\"")) << log;
  // Without the sandbox: an ordinary user gets the same EPERM from the kernel, root (CAP_NET_ADMIN) connects.
  EXPECT_EQ(::geteuid() == 0 ? "ok" : "EPERM", probe_on_host({"connect_netlink", "1", "0"}));
}

// A sockaddr of a family the broker has no rule for (AF_PACKET 17, AF_VSOCK 40, AF_BLUETOOTH 31) is never connected
// with the supervisor's rights, whatever the socket: EAFNOSUPPORT. (The kernel answers EINVAL for a unix socket, and
// for an inet6 socket and a short sockaddr; the broker decides before it.) The neighbours: the sandbox's own unix
// socket, a TCP connect to the relay's listener inside.
TEST(BrokerFamilies, AnUnknownFamilyIsRefusedOnUnixAndInetSockets) {
  SandboxWorkspace w;
  EXPECT_EQ("EAFNOSUPPORT", w.probe({"connect_family", "unix", "17"}));
  EXPECT_EQ("EAFNOSUPPORT", w.probe({"connect_family", "unix", "40"}));
  EXPECT_EQ("EAFNOSUPPORT", w.probe({"connect_family", "inet", "40"}));
  EXPECT_EQ("EAFNOSUPPORT", w.probe({"connect_family", "inet6", "31"}));
  EXPECT_EQ("ok", w.probe({"self_unix", "/tmp/own.sock"}));
  EXPECT_EQ("ok", w.probe({"connect_tcp", "127.0.0.1", "3128"}));  // the relay's listener
}

}  // namespace
}  // namespace oishell::test

namespace oishell::test {
namespace {

// A policy whose names are pinned to the host's loopback (hermetic): direct.example (inspect: false, any port),
// inspected.example (inspected), port.example (inspect: false, only `port`); denied.example is pinned but not
// allowed.
std::string tcp_policy(const TempDir& dir, const std::string& port) {
  return dir.write("policy.yaml", "version: 1\nextends: default\nnetwork:\n  mode: proxy\n  allow:\n"
                                  "    - {host: direct.example, inspect: false}\n"
                                  "    - {host: v6.example, inspect: false}\n"
                                  "    - inspected.example\n"
                                  "    - {host: port.example, ports: [" + port + "], inspect: false}\n"
                                  "  hosts: {direct.example: 127.0.0.1, inspected.example: 127.0.0.1,"
                                  " port.example: 127.0.0.1, denied.example: 127.0.0.1, v6.example: '::1'}\n"
                                  "  allow_private: [127.0.0.0/8, '::1/128']\n  on_unlisted: deny\n");
}

std::string python_in_sandbox(const std::string& policy, const std::string& script, const std::string& events = "") {
  std::vector<std::string> args = {"--policy", policy};
  if (!events.empty()) args.insert(args.end(), {"--events", events});
  SandboxRun run = run_sandboxed(args, {"/usr/bin/python3", "-c", script});
  return run.out + (run.status == 0 ? "" : "status=" + std::to_string(run.status) + ": " + run.err);
}

TEST(BrokerTcp, AProxyIgnoringClientReachesAnAllowedNameKernelToKernel) {
  HostTcpServer server("hello\n");
  ASSERT_TRUE(server.ok());
  TempDir dir;
  const std::string events = dir.path() + "/events.jsonl";
  const std::string script =
      "import socket, os\n"
      "s = socket.create_connection(('direct.example', " + server.port() + "))\n"
      "print(s.recv(6).decode().strip(), s.getpeername()[0])\n"
      "s.sendall(b'ping')\n";
  // The peer is the host's own address: the socket is the supervisor's, installed in the caller (no relay).
  EXPECT_EQ("hello 127.0.0.1\n", python_in_sandbox(tcp_policy(dir, server.port()), script, events));
  EXPECT_EQ(1, server.accepted());
  EXPECT_EQ("ping", server.received_with("ping"));
  const std::string log = SandboxWorkspace::read(events);
  EXPECT_NE(std::string::npos, log.find("\"protocol\":\"connect\"")) << log;
  EXPECT_NE(std::string::npos, log.find("\"event\":\"net.allowed\"")) << log;
  // The neighbour: a pinned name no rule allows is not even answered (NXDOMAIN from the stub), and connecting to
  // an allowed name on a port its rule does not list is refused at connect time.
  const std::string denied =
      "import socket\n"
      "try:\n  socket.getaddrinfo('denied.example', 80)\nexcept socket.gaierror as e: print('gaierror', e.errno == "
      "socket.EAI_NONAME)\n"
      "a = socket.getaddrinfo('port.example', 1, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]\n"
      "s = socket.socket()\n"
      "try:\n  s.connect((a, " + std::to_string(std::stoi(server.port()) == 65535 ? 1 : std::stoi(server.port()) + 1) +
      "))\nexcept OSError as e: print(e.errno == 13)\n";
  EXPECT_EQ("gaierror True\nTrue\n", python_in_sandbox(tcp_policy(dir, server.port()), denied));
  EXPECT_EQ(1, server.accepted());
}

// A name pinned to an address the private-address guard refuses is refused at connect time under
// `on_unlisted: ask`, without a question: no answer could let it through. (A literal loopback address is the
// sandbox's own loopback; the relay's test covers literal addresses.) The allowed name on the same server connects.
TEST(BrokerTcp, AGuardedAddressIsRefusedBeforeAnyQuestion) {
  HostTcpServer server("hello\n");
  ASSERT_TRUE(server.ok());
  TempDir dir;
  const std::string events = dir.path() + "/events.jsonl";
  const std::string policy =
      dir.write("policy.yaml", "version: 1\nextends: default\nnetwork:\n  mode: proxy\n  allow:\n"
                               "    - {host: direct.example, inspect: false}\n"
                               "  hosts: {direct.example: 127.0.0.1, pinned.example: 127.0.0.5}\n"
                               "  allow_private: [127.0.0.1/32]\n  on_unlisted: ask\n");
  const std::string script =
      "import socket\n"
      "s = socket.socket()\n"
      "try:\n  s.connect(('pinned.example', " + server.port() + "))\nexcept OSError as e: print(e.errno)\n"
      "print(socket.create_connection(('direct.example', " + server.port() + ")).recv(6).decode().strip())\n";
  EXPECT_EQ("13\nhello\n", python_in_sandbox(policy, script, events));
  EXPECT_EQ(1, server.wait_accepted(1));
  const std::string log = SandboxWorkspace::read(events);
  EXPECT_NE(std::string::npos, log.find("127.0.0.5 is loopback")) << log;
  EXPECT_NE(std::string::npos, log.find("private-address guard")) << log;
  EXPECT_EQ(std::string::npos, log.find("\"event\":\"net.ask\"")) << log;
}

TEST(BrokerTcp, CurlWithoutTheProxy) {
  HostTcpServer server("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n");
  ASSERT_TRUE(server.ok());
  TempDir dir;
  const std::string policy = tcp_policy(dir, server.port());
  SandboxRun run = run_sandboxed({"--policy", policy},
                                 {"/usr/bin/curl", "-sS", "--noproxy", "*", "http://direct.example:" + server.port() + "/"});
  EXPECT_EQ("ok\n", run.out) << run.err;
  // The inspected name joins the relay: the request names the host, so it passes.
  run = run_sandboxed({"--policy", policy},
                      {"/usr/bin/curl", "-sS", "--noproxy", "*", "http://inspected.example:" + server.port() + "/"});
  EXPECT_EQ("ok\n", run.out) << run.err;
  EXPECT_EQ(2, server.accepted());
}

TEST(BrokerTcp, AnInspectedNameRefusesAnotherHostInside) {
  HostTcpServer server("");
  ASSERT_TRUE(server.ok());
  TempDir dir;
  const std::string script =
      "import socket\n"
      "for host in ('inspected.example', 'other.example'):\n"
      "  s = socket.create_connection(('inspected.example', " + server.port() + "))\n"
      "  s.sendall(b'GET / HTTP/1.1\\r\\nHost: ' + host.encode() + b'\\r\\n\\r\\n')\n"
      "  try:\n    print(host, s.recv(7))\n  except OSError as e:\n    print(host, e.errno)\n";
  std::string out = python_in_sandbox(tcp_policy(dir, server.port()), script);
  EXPECT_NE(std::string::npos, out.find("inspected.example b''")) << out;  // the server read it and closed
  // The relay closes the other Host (an end of stream, or a reset) before a byte of it reaches the server.
  EXPECT_TRUE(out.find("other.example b''") != std::string::npos || out.find("other.example 104") != std::string::npos)
      << out;
  const std::string received = server.received_with("Host: inspected.example");
  EXPECT_NE(std::string::npos, received.find("Host: inspected.example")) << received;
  EXPECT_EQ(std::string::npos, received.find("other.example")) << received;
}

// An IPv6 socket connecting to the IPv4-mapped form of an inspected name's address joins the relay as an IPv4
// socket does.
TEST(BrokerTcp, AnIpv6SocketToAMappedAddressJoinsTheRelay) {
  HostTcpServer server("");
  ASSERT_TRUE(server.ok());
  TempDir dir;
  const std::string script =
      "import socket\n"
      "a = socket.getaddrinfo('inspected.example', 0, socket.AF_INET)[0][4][0]\n"
      "s = socket.socket(socket.AF_INET6); s.connect(('::ffff:' + a, " + server.port() + "))\n"
      "s.sendall(b'GET / HTTP/1.1\\r\\nHost: inspected.example\\r\\n\\r\\n')\n"
      "print(s.recv(5))\n";
  EXPECT_EQ("b''\n", python_in_sandbox(tcp_policy(dir, server.port()), script));
  EXPECT_NE(std::string::npos, server.received_with("Host: inspected.example").find("Host: inspected.example"))
      << server.received();
}

// A socket bound to the wildcard address before its connect (0.0.0.0 or :: with a port of its own) joins the relay
// as any other: the broker's key is the address the relay sees (127.0.0.1 and that port). Only below Landlock ABI 4:
// from it no TCP port can be bound inside (Network.TcpServersInsideOnlyBelowLandlockAbi4), nor does a listen()
// followed by connect(AF_UNSPEC) leave a socket that can connect. Before, the key kept the
// wildcard address, the relay never matched it (the record stayed behind) and took the connection for a proxy
// client's, answering its request itself.
TEST(BrokerTcp, AWildcardBoundSocketJoinsTheRelay) {
  if (sandbox_landlock_abi() >= 4) {
    GTEST_SKIP() << "Landlock ABI " << sandbox_landlock_abi() << " lets no TCP port be bound inside: no wildcard-bound "
                 << "socket can connect (the case needs a kernel with Landlock ABI 1-3 or none)";
  }
  HostTcpServer server("");
  ASSERT_TRUE(server.ok());
  TempDir dir;
  const std::string script =
      "import socket\n"
      "a = socket.getaddrinfo('inspected.example', 0, socket.AF_INET)[0][4][0]\n"
      "for family, wildcard, target in ((socket.AF_INET, '0.0.0.0', a), (socket.AF_INET6, '::', '::ffff:' + a)):\n"
      "  s = socket.socket(family); s.bind((wildcard, 0)); s.connect((target, " + server.port() + "))\n"
      "  s.sendall(b'GET / HTTP/1.1\\r\\nHost: inspected.example\\r\\n\\r\\n')\n"
      "  print(s.recv(5))\n";
  EXPECT_EQ("b''\nb''\n", python_in_sandbox(tcp_policy(dir, server.port()), script));
  EXPECT_EQ(2, server.wait_accepted(2));  // both requests reached the server, through the relay
}

TEST(BrokerTcp, NonBlockingConnectFastOpenAndIpv6) {
  HostTcpServer server("nb\n");
  HostTcpServer server6("v6\n", true);
  ASSERT_TRUE(server.ok());
  TempDir dir;
  const std::string script =
      "import socket, select, errno\n"
      "a = socket.getaddrinfo('direct.example', 0, socket.AF_INET)[0][4][0]\n"
      "s = socket.socket(); s.setblocking(False)\n"
      "rc = s.connect_ex((a, " + server.port() + "))\n"
      "select.select([], [s], [], 5)\n"
      "print(rc in (0, errno.EINPROGRESS), s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR), s.getblocking())\n"
      "select.select([s], [], [], 5); print(s.recv(3))\n"
      "t = socket.socket()\n"
      "print(t.sendto(b'tfo-data', socket.MSG_FASTOPEN, (a, " + server.port() + ")), t.recv(3))\n";
  std::string out = python_in_sandbox(tcp_policy(dir, server.port()), script);
  EXPECT_EQ("True 0 False\nb'nb\\n'\n8 b'nb\\n'\n", out);
  EXPECT_NE(std::string::npos, server.received_with("tfo-data").find("tfo-data")) << server.received();
  if (!server6.ok()) GTEST_SKIP() << "IPv6 loopback unavailable on the host";
  const std::string v6 =
      "import socket\n"
      "a = socket.getaddrinfo('v6.example', 0, socket.AF_INET6)[0][4][0]\n"
      "s = socket.socket(socket.AF_INET6); s.connect((a, " + server6.port() + "))\n"
      "print(a.startswith('fd6f:'), s.recv(3))\n";
  EXPECT_EQ("True b'v6\\n'\n", python_in_sandbox(tcp_policy(dir, server.port()), v6));
}

// nc (netcat-openbsd) ignores the proxy variables and resolves names itself: the DNS stub answers, the broker
// connects. Without the sandbox's DNS stub and broker it would reach any address the host reaches.
TEST(BrokerTcp, NetcatReachesAnAllowedNameOnly) {
  std::error_code ec;
  ASSERT_EQ("nc.openbsd", std::filesystem::canonical("/usr/bin/nc", ec).filename().string())
      << "this test needs netcat-openbsd as /usr/bin/nc (tools/dev installs it): " << ec.message();
  HostTcpServer server("hello from the host\n");
  ASSERT_TRUE(server.ok());
  TempDir dir;
  const std::string policy = tcp_policy(dir, server.port());
  SandboxRun run = run_sandboxed({"--policy", policy},
                                 {"/bin/sh", "-c", "echo nc-ping | /usr/bin/nc -N direct.example " + server.port()});
  EXPECT_EQ(0, run.status) << run.err;
  EXPECT_EQ("hello from the host\n", run.out) << run.err;
  EXPECT_EQ("nc-ping\n", server.received_with("nc-ping"));
  // The neighbours: an allowed name on a port its rule does not list is refused at connect (EACCES)...
  const std::string other_port = std::to_string(std::stoi(server.port()) == 65535 ? 1 : std::stoi(server.port()) + 1);
  run = run_sandboxed({"--policy", policy}, {"/usr/bin/nc", "-v", "-N", "port.example", other_port});
  EXPECT_EQ(1, run.status) << run.err;
  EXPECT_NE(std::string::npos, run.err.find("port " + other_port + " (tcp) failed: Permission denied")) << run.err;
  // ... and a pinned name no rule allows has no address (NXDOMAIN from the stub).
  run = run_sandboxed({"--policy", policy}, {"/usr/bin/nc", "-v", "-N", "denied.example", server.port()});
  EXPECT_EQ(1, run.status) << run.err;
  EXPECT_NE(std::string::npos,
            run.err.find("getaddrinfo for host \"denied.example\" port " + server.port() + ": Name or service not known"))
      << run.err;
  EXPECT_EQ(1, server.accepted());
}

// The socket the broker installs takes the place of the caller's with what the caller gave its own: close-on-exec
// or not, blocking or not, and the options set before connect. Three sockets in turn on one fd number (the broker
// keeps a thread's fdinfo file between calls: a later socket on the same number must not inherit the earlier
// one's flags). The neighbour: the same script on the host, connecting the caller's own sockets, prints the same.
TEST(BrokerTcp, AnInstalledSocketKeepsTheCallersFlagsAndOptions) {
  HostTcpServer server("");
  ASSERT_TRUE(server.ok());
  TempDir dir;
  auto script = [&](const std::string& host) {
    return "import socket, select\n"
           "def show(tag, s):\n"
           "  print(tag, s.get_inheritable(), s.getblocking(),\n"
           "        s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0,\n"
           "        s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) != 0,\n"
           "        s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE), s.getpeername()[1] == " + server.port() + ")\n"
           "a = socket.socket(); a.set_inheritable(True)\n"
           "a.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
           "a.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)\n"
           "a.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 77)\n"
           "a.connect(('" + host + "', " + server.port() + ")); show('a', a); fd = a.fileno(); a.close()\n"
           "b = socket.socket(); b.connect(('" + host + "', " + server.port() + ")); show('b', b)\n"
           "print('same fd', b.fileno() == fd); b.close()\n"
           "c = socket.socket(); c.setblocking(False)\n"
           "c.connect_ex(('" + host + "', " + server.port() + "))\n"
           "select.select([], [c], [], 5); show('c', c); print('same fd', c.fileno() == fd)\n";
  };
  const std::string expected =
      "a True True True True 77 True\n"
      "b False True False False 7200 True\n"
      "same fd True\n"
      "c False False False False 7200 True\n"
      "same fd True\n";
  EXPECT_EQ(expected, python_in_sandbox(tcp_policy(dir, server.port()), script("direct.example")));
  EXPECT_EQ(3, server.wait_accepted(3));
  SandboxRun host = run_on_host({"/usr/bin/python3", "-c", script("127.0.0.1")});
  EXPECT_EQ(expected, host.out) << host.err;
}

// A socket the broker installed is the supervisor's, of the host's network namespace: it keeps its one destination.
// Without the broker, connect(AF_UNSPEC) dissolves a TCP connection (0), after which the socket can connect
// anywhere the host can, or listen on the host's network.
TEST(BrokerTcp, AnInstalledSocketCannotBeRepointed) {
  HostTcpServer server("allowed\n");
  HostTcpServer other("other\n");
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE(other.ok());
  TempDir dir;
  SandboxRun run = run_sandboxed({"--policy", tcp_policy(dir, server.port())},
                                 {probe_bin(), "repoint_tcp", "direct.example", server.port(), "127.0.0.1",
                                  other.port()});
  // AF_UNSPEC and the other address: the broker's EISCONN; listen: the kernel's EINVAL on a connected socket.
  // The neighbour: the same socket still carries data both ways to the allowed server.
  EXPECT_EQ("unspec=EISCONN other=EISCONN listen=EINVAL recv=allowed\n", run.out) << run.err;
  EXPECT_EQ("after-repoint", server.received_with("after-repoint"));
  EXPECT_EQ(1, server.accepted());
  EXPECT_EQ(0, other.accepted());
  // The same steps on the host: the connection is dissolved and the socket reaches the other server.
  EXPECT_EQ("unspec=ok other=ok listen=EINVAL recv=other",
            probe_on_host({"repoint_tcp", "127.0.0.1", server.port(), "127.0.0.1", other.port()}));
  EXPECT_EQ(1, other.wait_accepted(1));
}

// Sockets of the host's network namespace passed in over a listed unix socket (SCM_RIGHTS) are not brokered
// either: an unconnected one cannot be connected (it would reach the host's loopback), a connected one cannot be
// dissolved; the connected one still carries data.
TEST(BrokerTcp, SocketsPassedInFromOutsideCannotBeRepointed) {
  SandboxWorkspace w;
  HostTcpServer server("passed\n");
  ASSERT_TRUE(server.ok());
  UniqueFd connected = connect_host_tcp(static_cast<uint16_t>(std::stoi(server.port())));
  UniqueFd unconnected(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(connected);
  ASSERT_TRUE(unconnected);
  const std::string path = w.outside() + "/passer.sock";
  HostUnixServer passer(path, 'P', {connected.get(), unconnected.get()});
  ASSERT_TRUE(passer.ok());
  ASSERT_EQ(0, ::chmod(path.c_str(), 0666));  // a service for every user (the broker connects as the sandbox's ids)
  EXPECT_EQ("unconnected=EISCONN unspec=EISCONN recv=passed",
            w.probe({"passed_sockets", path, server.port()}, {"--ro", w.outside(), "--unix", path}));
  EXPECT_EQ("passed-in", server.received_with("passed-in"));
  EXPECT_EQ(1, server.accepted());  // the host's own connection only
  // The same sockets in a program on the host: the unconnected one reaches the server, the other is dissolved
  // (reset: a send on it then fails).
  EXPECT_EQ("unconnected=ok unspec=ok recv=send:ECONNRESET", probe_on_host({"passed_sockets", path, server.port()}));
  EXPECT_EQ(2, server.wait_accepted(2));
}

// The states ("01" established, "02" SYN sent, ...) of this network namespace's TCP sockets whose remote port is
// `port` (/proc/net/tcp).
std::vector<std::string> tcp_states_to(uint16_t port) {
  char remote_port[8];
  std::snprintf(remote_port, sizeof remote_port, ":%04X", port);
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // the header
  std::vector<std::string> states;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (remote.ends_with(remote_port)) states.push_back(state);
  }
  return states;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// `oishell run` in the background; SIGKILLed and reaped when the test leaves early.
struct BackgroundSupervisor {
  BackgroundOishell started;
  UniqueFd stderr_fd{started.stderr_fd};
  bool reaped = false;
  int kill_and_reap() {
    ::kill(started.pid, SIGKILL);
    int status = wait_for_exit(started.pid, 10'000);
    reaped = status != -1;
    return status;
  }
  std::string stderr_text() {
    std::string text;
    char buf[4096];
    ::fcntl(stderr_fd.get(), F_SETFL, O_NONBLOCK);
    for (ssize_t n; (n = ::read(stderr_fd.get(), buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    return text;
  }
  ~BackgroundSupervisor() {
    if (!reaped) kill_and_reap();
  }
};

// A connect pending in the broker when the supervisor is SIGKILLed. The kernel fails a pending notification whose
// listener is gone (ENOSYS), and sandbox init follows the supervisor (PDEATHSIG), taking every process of the
// sandbox with it: whether the caller runs between the two is a race. It either reports ENOSYS and a socket not
// connected (ENOTCONN) or is killed before it returns; never a connection. Every process of the sandbox exits,
// and the supervisor's own half-open connection goes with it.
TEST(BrokerTcp, ASupervisorKilledMidConnectLeavesNothingConnected) {
  // An upstream that drops SYNs (its one-place accept queue is full), so the broker's connect stays pending.
  HostTcpListener upstream(false, /*backlog=*/0);
  ASSERT_TRUE(upstream.ok());
  UniqueFd filler = connect_host_tcp(upstream.port());
  ASSERT_TRUE(filler);
  SandboxWorkspace w;
  TempDir dir;
  const std::string port = std::to_string(upstream.port());
  const std::string policy = tcp_policy(dir, port);
  const std::string outcome = w.ws() + "/outcome";
  const std::vector<std::string> args = {"--policy", policy, "--workspace", w.ws(), "--ro",
                                         std::filesystem::path(probe_bin()).parent_path().string()};
  BackgroundSupervisor supervisor{start_oishell(args, {probe_bin(), "pending_connect", "direct.example", port, outcome})};
  bool pending = false;
  for (int i = 0; i < 1000 && !pending; ++i) {
    pending = has(tcp_states_to(upstream.port()), "02");  // the supervisor's SYN, unanswered
    if (!pending) ::usleep(10'000);
  }
  ASSERT_TRUE(pending) << "the broker's connect never started: " << supervisor.stderr_text();
  const std::vector<pid_t> sandbox = descendants_of(supervisor.started.pid);  // init, the caller (, the janitor)
  ASSERT_GE(sandbox.size(), 2u);
  std::vector<UniqueFd> pidfds;
  for (pid_t pid : sandbox) pidfds.emplace_back(sys::pidfd_open(pid, 0));
  const int status = supervisor.kill_and_reap();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  for (size_t i = 0; i < sandbox.size(); ++i) {
    pollfd exited{pidfds[i].get(), POLLIN, 0};
    EXPECT_TRUE(!pidfds[i] || ::poll(&exited, 1, 10'000) == 1) << "process " << sandbox[i] << " still runs";
  }
  const std::string reported = SandboxWorkspace::read(outcome);
  EXPECT_TRUE(reported.empty() || reported == "connect=ENOSYS peer=ENOTCONN\n") << reported;
  std::printf("[          ] the caller %s\n", reported.empty() ? "was killed before its connect returned"
                                                                 : "saw its connect fail (ENOSYS)");
  // Only the filler's connection is left towards the upstream: the supervisor's SYN_SENT socket was closed.
  EXPECT_EQ(std::vector<std::string>{"01"}, tcp_states_to(upstream.port()));
  // The neighbour: the same connect to an upstream that accepts, with the supervisor alive, connects.
  HostTcpServer server("");
  ASSERT_TRUE(server.ok());
  SandboxRun run = run_sandboxed({"--policy", policy, "--workspace", w.ws()},
                                 {probe_bin(), "pending_connect", "direct.example", server.port(), outcome});
  EXPECT_EQ("connect=ok peer=ok\n", run.out) << run.err;
}

// An upstream DNS server on the host's loopback for the supervisor (OISHELL_DNS_SERVERS): answers every A
// question with 127.0.0.1 and records each name it is asked.
class RecordingDnsServer {
 public:
  RecordingDnsServer() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ok_ = ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
          ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    port_ = ntohs(addr.sin_port);
    timeval tv{0, 100'000};
    setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (ok_) thread_ = std::thread([this] { serve(); });
  }
  ~RecordingDnsServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool ok() const { return ok_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string asked() {
    std::lock_guard lock(mu_);
    return asked_;
  }

 private:
  void serve() {
    unsigned char q[512];
    while (!stop_) {
      sockaddr_in from{};
      socklen_t from_len = sizeof from;
      ssize_t n = ::recvfrom(fd_.get(), q, sizeof q, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 12) continue;
      std::string name;
      size_t at = 12;
      while (at < static_cast<size_t>(n) && q[at] != 0 && at + q[at] < static_cast<size_t>(n)) {
        if (!name.empty()) name += '.';
        name.append(reinterpret_cast<char*>(q + at + 1), q[at]);
        at += q[at] + 1;
      }
      if (at + 5 > static_cast<size_t>(n)) continue;
      const bool type_a = q[at + 1] == 0 && q[at + 2] == 1;
      {
        std::lock_guard lock(mu_);
        asked_ += name + " ";
      }
      std::string reply(reinterpret_cast<char*>(q), at + 5);  // header + question
      reply[2] = static_cast<char>(0x81);                      // response, recursion desired
      reply[3] = static_cast<char>(0x80);                      // recursion available, NOERROR
      reply[6] = 0;
      reply[7] = type_a ? 1 : 0;                               // one answer for A, none otherwise
      reply[8] = reply[9] = reply[10] = reply[11] = 0;
      if (type_a) {
        const unsigned char answer[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1};
        reply.append(reinterpret_cast<const char*>(answer), sizeof answer);
      }
      ::sendto(fd_.get(), reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&from), from_len);
    }
  }
  UniqueFd fd_;
  bool ok_ = false;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::string asked_;
  std::thread thread_;
};

TEST(BrokerDns, ADeniedNameIsNeverAskedUpstream) {
  RecordingDnsServer upstream;
  ASSERT_TRUE(upstream.ok());
  HostTcpServer server("looked-up\n");
  ASSERT_TRUE(server.ok());
  TempDir dir;
  const std::string policy =
      dir.write("policy.yaml", "version: 1\nextends: default\nnetwork:\n  allow:\n"
                               "    - {host: lookup.example, inspect: false}\n"
                               "  allow_private: [127.0.0.0/8]\n  on_unlisted: deny\n");
  const std::string script =
      "import socket\n"
      "try:\n  socket.getaddrinfo('secret-data.exfil.example', 80)\nexcept socket.gaierror as e: print('denied')\n"
      "s = socket.create_connection(('lookup.example', " + server.port() + "))\n"
      "print(s.recv(10))\n";
  ::setenv("OISHELL_DNS_SERVERS", upstream.address().c_str(), 1);
  SandboxRun run = run_sandboxed({"--policy", policy}, {"/usr/bin/python3", "-c", script});
  ::unsetenv("OISHELL_DNS_SERVERS");
  EXPECT_EQ("denied\nb'looked-up\\n'\n", run.out) << run.err;
  // The allowed name was looked up through this server (so it does see the supervisor's questions); the denied one
  // never reached it.
  EXPECT_NE(std::string::npos, upstream.asked().find("lookup.example")) << upstream.asked();
  EXPECT_EQ(std::string::npos, upstream.asked().find("exfil")) << upstream.asked();
}

TEST(BrokerTcp, UdpOutsideIsRefused) {
  TempDir dir;
  const std::string script =
      "import socket\n"
      "a = socket.getaddrinfo('direct.example', 0, socket.AF_INET)[0][4][0]\n"
      "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
      "try:\n  u.connect((a, 5353))\nexcept OSError as e: print('udp', e.errno == 101)\n"
      "d = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); d.connect(('127.0.0.1', 53)); print('dns ok')\n";
  EXPECT_EQ("udp True\ndns ok\n", python_in_sandbox(tcp_policy(dir, "80"), script));
}

}  // namespace
}  // namespace oishell::test
