// UDP through the datagram relay (runtime/relay/datagram_relay.h, runtime/broker/broker_udp.cc): a connected
// datagram socket inside reaches a host and port a `protocol: udp` rule allows, its datagrams copied by the
// supervisor; every other UDP destination is unreachable (ENETUNREACH) with a net.denied event, a tcp rule never
// allows UDP nor a udp rule TCP, and a socket inside that sends to the relay's inner socket without having been
// connected through the broker gets nothing forwarded. Without the sandbox each refused call would reach the echo
// server (it listens on the host's 127.0.0.1).
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

// A UDP echo server on the host's 127.0.0.1 (an ephemeral port), on its own thread; records what it received.
class HostUdpEcho {
 public:
  HostUdpEcho() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    timeval tv{0, 100'000};
    ok_ = fd_ && ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
          ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
          ::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0;
    port_ = ntohs(addr.sin_port);
    if (!ok_) return;
    thread_ = std::thread([this] {
      std::vector<char> buf(65536);
      while (!stop_) {
        sockaddr_in from{};
        socklen_t from_len = sizeof from;
        ssize_t n = ::recvfrom(fd_.get(), buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
        if (n < 0) continue;
        {
          std::lock_guard lock(mu_);
          sizes_.push_back(static_cast<size_t>(n));
        }
        ::sendto(fd_.get(), buf.data(), static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), from_len);
      }
    });
  }
  ~HostUdpEcho() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool ok() const { return ok_; }
  std::string port() const { return std::to_string(port_); }
  std::string other_port() const { return std::to_string(port_ == 65535 ? 1 : port_ + 1); }
  std::vector<size_t> sizes() {
    std::lock_guard lock(mu_);
    return sizes_;
  }

 private:
  UniqueFd fd_;
  bool ok_ = false;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<size_t> sizes_;
  std::thread thread_;
};

// echo.example: udp at `port` only; tcponly.example: tcp at `port` only. Both pinned to the host's 127.0.0.1.
std::string udp_policy(const TempDir& dir, const std::string& port) {
  return dir.write("policy.yaml", "version: 1\nextends: default\nnetwork:\n  mode: proxy\n  allow:\n"
                                  "    - {host: echo.example, ports: [" + port + "], protocol: udp}\n"
                                  "    - {host: tcponly.example, ports: [" + port + "], inspect: false}\n"
                                  "  hosts: {echo.example: 127.0.0.1, tcponly.example: 127.0.0.1}\n"
                                  "  allow_private: [127.0.0.0/8, '::1/128']\n  on_unlisted: deny\n");
}

std::string python_in_sandbox(const std::string& policy, const std::string& script, const std::string& events = "") {
  std::vector<std::string> args = {"--policy", policy};
  if (!events.empty()) args.insert(args.end(), {"--events", events});
  SandboxRun run = run_sandboxed(args, {"/usr/bin/python3", "-c", script});
  return run.out + (run.status == 0 ? "" : "status=" + std::to_string(run.status) + ": " + run.err);
}

// The python prologue: `a` is the stub's (synthetic) IPv4 address of echo.example; P the allowed port.
std::string prologue(const HostUdpEcho& echo) {
  return "import socket, errno\n"
         "P = " + echo.port() + "\n"
         "a = socket.getaddrinfo('echo.example', P, socket.AF_INET, socket.SOCK_DGRAM)[0][4][0]\n"
         "def udp(family=socket.AF_INET):\n"
         "  s = socket.socket(family, socket.SOCK_DGRAM); s.settimeout(5); return s\n";
}

TEST(Udp, AnAllowedNameAndPortEchoesByteIdenticalThroughTheRelay) {
  HostUdpEcho echo;
  ASSERT_TRUE(echo.ok());
  TempDir dir;
  const std::string events = dir.path() + "/events.jsonl";
  const std::string script = prologue(echo) +
      "s = udp(); s.connect((a, P))\n"
      "big = bytes(range(256)) * 234 + b'x' * 96\n"
      "assert len(big) == 60000\n"
      "same = []\n"
      "for d in [b'one', b'\\x00\\xff' * 700, big, b'', b'last']:\n"
      "  s.send(d); same.append(s.recv(65536) == d)\n"
      "print('echo', same)\n"
      "print('peer', s.getpeername()[0])\n"  // the relay's inner socket, not the host's server
      "s6 = udp(socket.AF_INET6); s6.connect(('::ffff:' + a, P))\n"
      "s6.send(b'six'); print('v6', s6.recv(100))\n";
  EXPECT_EQ("echo [True, True, True, True, True]\npeer 127.0.0.2\nv6 b'six'\n",
            python_in_sandbox(udp_policy(dir, echo.port()), script, events));
  EXPECT_EQ((std::vector<size_t>{3, 1400, 60000, 0, 4, 3}), echo.sizes());
  const std::string log = SandboxWorkspace::read(events);
  EXPECT_NE(std::string::npos, log.find("\"event\":\"net.allowed\"")) << log;
  EXPECT_NE(std::string::npos, log.find("\"protocol\":\"udp\"")) << log;
  EXPECT_NE(std::string::npos, log.find("\"rule\":\"allow udp echo.example:" + echo.port() + "\"")) << log;
}

TEST(Udp, AnotherPortATcpRuleAndAnUnconnectedSendAreUnreachable) {
  HostUdpEcho echo;
  ASSERT_TRUE(echo.ok());
  TempDir dir;
  const std::string events = dir.path() + "/events.jsonl";
  const std::string script = prologue(echo) +
      "def connect(host, port, kind=socket.SOCK_DGRAM):\n"
      "  t = socket.getaddrinfo(host, port, socket.AF_INET, kind)[0][4][0]\n"
      "  s = socket.socket(socket.AF_INET, kind); s.settimeout(5)\n"
      "  try:\n    s.connect((t, port)); return 'ok'\n  except OSError as e: return errno.errorcode[e.errno]\n"
      "print('other port', connect('echo.example', " + echo.other_port() + "))\n"
      "print('tcp rule', connect('tcponly.example', P))\n"
      "print('udp rule over tcp', connect('echo.example', P, socket.SOCK_STREAM))\n"
      "u = udp()\n"
      "try:\n  u.sendto(b'x', (a, P)); print('sendto ok')\nexcept OSError as e: print('sendto', "
      "errno.errorcode[e.errno])\n"
      "print('allowed', connect('echo.example', P))\n";  // the neighbour, after the refusals
  EXPECT_EQ("other port ENETUNREACH\ntcp rule ENETUNREACH\nudp rule over tcp EACCES\nsendto ENETUNREACH\n"
            "allowed ok\n",
            python_in_sandbox(udp_policy(dir, echo.port()), script, events));
  EXPECT_TRUE(echo.sizes().empty());  // nothing was sent on the allowed socket: nothing reached the server
  const std::string log = SandboxWorkspace::read(events);
  // Events carry their keys sorted.
  EXPECT_NE(std::string::npos, log.find("\"event\":\"net.denied\",\"host\":\"echo.example\",\"port\":" +
                                        echo.other_port() + ",\"protocol\":\"udp\""))
      << log;
  EXPECT_NE(std::string::npos, log.find("\"event\":\"net.denied\",\"host\":\"tcponly.example\",\"port\":" +
                                        echo.port() + ",\"protocol\":\"udp\""))
      << log;
  EXPECT_NE(std::string::npos, log.find("\"event\":\"net.denied\",\"host\":\"echo.example\",\"port\":" +
                                        echo.port() + ",\"protocol\":\"connect\""))
      << log;
}

TEST(Udp, ThePrivateAddressGuardAppliesAsForTcp) {
  TempDir dir;
  const std::string events = dir.path() + "/events.jsonl";
  // A udp rule naming a private address, without allow_private: the guard refuses it at connect time, before any
  // socket of the supervisor's exists (no datagram is sent anywhere). The neighbour, the same rule form for a
  // loopback name with allow_private, is the echo test above.
  const std::string policy =
      dir.write("guard.yaml", "version: 1\nextends: default\nnetwork:\n  mode: proxy\n  allow:\n"
                              "    - {host: 10.0.0.1, ports: [123], protocol: udp}\n  on_unlisted: deny\n");
  const std::string script =
      "import socket, errno\n"
      "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
      "try:\n  s.connect(('10.0.0.1', 123)); print('ok')\n"
      "except OSError as e: print(errno.errorcode[e.errno])\n";
  EXPECT_EQ("ENETUNREACH\n", python_in_sandbox(policy, script, events));
  const std::string log = SandboxWorkspace::read(events);
  EXPECT_NE(std::string::npos, log.find("\"event\":\"net.denied\",\"host\":\"10.0.0.1\",\"port\":123,"
                                        "\"protocol\":\"udp\""))
      << log;
  EXPECT_NE(std::string::npos, log.find("\"rule\":\"private-address guard\"")) << log;
  EXPECT_EQ(std::string::npos, log.find("net.allowed")) << log;
}

TEST(Udp, AssociationsAreBoundedAndClosedSocketsGiveTheirsBack) {
  HostUdpEcho echo;
  ASSERT_TRUE(echo.ok());
  TempDir dir;
  const std::string script = prologue(echo) +
      // 300 sockets one after the other, each closed: the 257th finds the table full of closed sockets' associations,
      // which the broker then ends (sock_diag shows the sockets gone).
      "n = 0\n"
      "for i in range(300):\n"
      "  s = udp(); s.connect((a, P)); s.send(b'%d' % i); n += s.recv(100) == b'%d' % i; s.close()\n"
      "print('sequential', n)\n"
      // 256 open at once take every association; the 257th is refused with EAGAIN; closing one makes room.
      "held = []\n"
      "for i in range(256):\n"
      "  s = udp(); s.connect((a, P)); held.append(s)\n"
      "extra = udp()\n"
      "try:\n  extra.connect((a, P)); print('257th ok')\n"
      "except OSError as e: print('257th', errno.errorcode[e.errno])\n"
      "held.pop().close()\n"
      "extra.connect((a, P)); extra.send(b'again'); print('after a close', extra.recv(100))\n";
  EXPECT_EQ("sequential 300\n257th EAGAIN\nafter a close b'again'\n",
            python_in_sandbox(udp_policy(dir, echo.port()), script));
  EXPECT_EQ(301u, echo.sizes().size());
}

TEST(Udp, AnUnknownSourceSendingToTheInnerSocketGetsNothingForwarded) {
  HostUdpEcho echo;
  ASSERT_TRUE(echo.ok());
  TempDir dir;
  const std::string script = prologue(echo) +
      "s = udp(); s.connect((a, P))\n"
      "inner = s.getpeername()\n"
      // Another socket, connected to the inner socket directly (a loopback connect: allowed, no association).
      "x = udp(); x.settimeout(1); x.connect(inner); x.send(b'spoof-connected')\n"
      "y = udp(); y.settimeout(1); y.sendto(b'spoof-unconnected', inner)\n"
      "for t in (x, y):\n"
      "  try:\n    print('reply', t.recv(100))\n  except socket.timeout: print('no reply')\n"
      "s.send(b'mine'); print('echo', s.recv(100))\n";  // the neighbour: the associated socket still works
  EXPECT_EQ("no reply\nno reply\necho b'mine'\n", python_in_sandbox(udp_policy(dir, echo.port()), script));
  EXPECT_EQ((std::vector<size_t>{4}), echo.sizes());  // only the associated socket's datagram
}

// A socket that had an association, connected again straight at the relay's inner socket: the broker ends the
// association first, so the same source now sends as an unknown one and nothing more is forwarded. The neighbour:
// the datagram before the re-point was echoed.
TEST(Udp, ASocketRepointedAtTheInnerSocketLosesItsAssociation) {
  HostUdpEcho echo;
  ASSERT_TRUE(echo.ok());
  TempDir dir;
  const std::string script = prologue(echo) +
      "s = udp(); s.connect((a, P)); s.send(b'before'); print('before', s.recv(100))\n"
      "inner = s.getpeername()\n"
      "s.connect(inner); s.send(b'after'); s.settimeout(1)\n"
      "try:\n  print('after', s.recv(100))\nexcept socket.timeout:\n  print('after nothing')\n";
  EXPECT_EQ("before b'before'\nafter nothing\n", python_in_sandbox(udp_policy(dir, echo.port()), script));
  EXPECT_EQ((std::vector<size_t>{6}), echo.sizes());
}

// connect(AF_UNSPEC) ends a datagram socket's association at once, as it ends the kernel's: send() without an
// address is EDESTADDRREQ, and a sendto() of the relay's inner socket from the same source (a socket bound to a
// port it named keeps its address through the disconnect) is an unknown source's: nothing is forwarded. Before, the
// record outlived the disconnect and that datagram reached the echo server and came back. The neighbours: the
// disconnected socket still sends to an address of its own choosing inside, and a new connect associates again.
TEST(Udp, ConnectAfUnspecEndsTheAssociationAtOnce) {
  HostUdpEcho echo;
  ASSERT_TRUE(echo.ok());
  TempDir dir;
  SandboxRun run = run_sandboxed({"--policy", udp_policy(dir, echo.port())},
                                 {probe_bin(), "udp_unspec", "echo.example", echo.port()});
  EXPECT_EQ("first=one unspec=ok send=EDESTADDRREQ inner=EAGAIN local=ok again=five\n", run.out) << run.err;
  EXPECT_EQ((std::vector<size_t>{3, 4}), echo.sizes());  // "one" and "five": never "three"
}

// `oishell run --allow-udp NAME:PORT` is a udp rule for that name and port only.
TEST(Udp, TheAllowUdpFlagAllowsOneNameAndPort) {
  HostUdpEcho echo;
  ASSERT_TRUE(echo.ok());
  TempDir dir;
  const std::string policy = dir.write("policy.yaml", "version: 1\nextends: default\nnetwork:\n"
                                       "  hosts: {echo.example: 127.0.0.1}\n  allow_private: [127.0.0.0/8]\n");
  const std::string script = prologue(echo) +
      "for port in (P, " + echo.other_port() + "):\n"
      "  s = udp()\n"
      "  try:\n    s.connect((a, port))\n  except OSError as e:\n    print(port == P, errno.errorcode[e.errno]); continue\n"
      "  s.send(b'flag'); print(port == P, s.recv(100))\n";
  SandboxRun run = run_sandboxed({"--policy", policy, "--allow-udp", "echo.example:" + echo.port()},
                                 {"/usr/bin/python3", "-c", script});
  EXPECT_EQ("True b'flag'\nFalse ENETUNREACH\n", run.out) << run.err;
  EXPECT_EQ((std::vector<size_t>{4}), echo.sizes());
  // Without the flag the same policy has no udp rule: the name's port is unreachable too.
  run = run_sandboxed({"--policy", policy}, {"/usr/bin/python3", "-c", script});
  EXPECT_EQ("True ENETUNREACH\nFalse ENETUNREACH\n", run.out) << run.err;
  EXPECT_EQ((std::vector<size_t>{4}), echo.sizes());
}

}  // namespace
}  // namespace oishell::test
