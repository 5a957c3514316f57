// The connect broker (runtime/broker): every connect(2) inside is performed by the supervisor. Pathname unix
// sockets are decided by inode: the sandbox's own (its tmpfs, or bound by a server inside) and `network.unix`
// are connectable; a host service's socket is not, however it became visible (given read-only, in the workspace,
// through a symlink), and a sockaddr rewritten while the connect is pending never reaches it.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "base/unique_fd.h"
#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

// A unix stream server on the host at `path` that writes `reply` to each client, on its own thread.
class HostUnixServer {
 public:
  HostUnixServer(const std::string& path, char reply) : fd_(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    ok_ = ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd_.get(), 64) == 0;
    if (ok_) {
      thread_ = std::thread([this, reply] {
        while (!stop_) {
          int c = ::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
          if (c < 0) continue;
          ++accepted_;
          [[maybe_unused]] ssize_t n = ::send(c, &reply, 1, MSG_NOSIGNAL);
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

 private:
  UniqueFd fd_;
  bool ok_ = false;
  std::string path_;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

std::string events_of(const std::string& file) { return SandboxWorkspace::read(file); }

TEST(BrokerUnix, HostSocketGivenReadOnlyIsRefusedWithAnEvent) {
  SandboxWorkspace w;
  const std::string path = w.outside() + "/service.sock";
  HostUnixServer host(path, 'D');
  ASSERT_TRUE(host.ok());
  ASSERT_EQ("ok", probe_on_host({"connect_unix", path}));
  const int accepted_before = host.accepted();
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

TEST(BrokerUnix, ListedSocketIsConnectableAndItsNeighbourIsNot) {
  SandboxWorkspace w;
  const std::string listed = w.outside() + "/listed.sock";
  const std::string other = w.outside() + "/other.sock";
  HostUnixServer listed_server(listed, 'L');
  HostUnixServer other_server(other, 'D');
  ASSERT_TRUE(listed_server.ok());
  ASSERT_TRUE(other_server.ok());
  // --unix is network.unix on the command line; in a policy file the same list is `network: {unix: [...]}`.
  EXPECT_EQ("ok", w.probe({"connect_unix", listed}, {"--ro", w.outside(), "--unix", listed}));
  EXPECT_EQ(1, listed_server.accepted());
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
  EXPECT_EQ(2, listed_server.accepted());
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
  const int accepted_before = host.accepted();
  std::string out = w.probe({"unix_rewrite_race", mine, other, "400"}, {"--rw", w.path("d0"), "--ro", w.path("d1")});
  ASSERT_TRUE(out.starts_with("ok ")) << out;
  // Both outcomes happened (the race was real): some connects read the other path and were refused.
  int refused = std::stoi(out.substr(3, out.find('/') - 3));
  EXPECT_GT(refused, 0) << out;
  EXPECT_LT(refused, 400) << out;
  EXPECT_EQ(accepted_before, host.accepted());
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

}  // namespace
}  // namespace oishell::test
