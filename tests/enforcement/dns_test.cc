// DNS inside the sandbox (proxy mode): /etc/resolv.conf names the stub on 127.0.0.1, whose sockets live in the
// sandbox's network namespace and are answered outside, by the policy. An allowed name resolves to a synthetic
// address (198.18.0.0/15), never a real one; a denied name does not exist (EAI_NONAME) and is reported; an `ask`
// name is answered without asking anyone. Names are pinned with `hosts:` and every other name is denied or asked
// about, so no query leaves the machine.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "harness.h"
#include "policy/compile.h"
#include "runtime/outside/sandbox.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

constexpr const char* kGetent = "/usr/bin/getent";
constexpr const char* kPython = "/usr/bin/python3";

// A DNS query over TCP to 127.0.0.1:53, by hand: prints "RCODE ANCOUNT ADDRESS".
constexpr const char* kTcpQuery = R"(import socket, struct, sys
name = sys.argv[1]
q = struct.pack('>HHHHHH', 0x4242, 0x0100, 1, 0, 0, 0)
q += b''.join(bytes([len(l)]) + l.encode() for l in name.split('.')) + b'\0' + struct.pack('>HH', 1, 1)
s = socket.create_connection(('127.0.0.1', 53), timeout=10)
s.sendall(struct.pack('>H', len(q)) + q)
def exact(n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            sys.exit('eof')
        b += c
    return b
r = exact(struct.unpack('>H', exact(2))[0])
count = struct.unpack('>H', r[6:8])[0]
print(r[3] & 0xf, count, socket.inet_ntoa(r[-4:]) if count else '-')
)";

class DnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Test dependencies on every Debian system (libc-bin, python3: tools/dev installs it): missing is a failure.
    ASSERT_TRUE(std::filesystem::exists(kGetent)) << kGetent;
    ASSERT_TRUE(std::filesystem::exists(kPython)) << kPython;
    write_policy("deny");
    dir_.write("tcp_query.py", kTcpQuery);
  }
  void write_policy(const std::string& on_unlisted) {
    policy_ = dir_.write("policy.yaml", R"(version: 1
extends: default
network:
  mode: proxy
  allow: ["allowed.example"]
  deny: ["blocked.example"]
  hosts: {allowed.example: 127.0.0.2}
  allow_private: [127.0.0.0/8]
  on_unlisted: )" + on_unlisted + "\n");
  }
  SandboxRun run(const std::vector<std::string>& command, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--policy", policy_, "--workspace", dir_.path(), "--events", events_path()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_sandboxed(args, command, 60);
  }
  std::string events_path() const { return outside_.path() + "/events.jsonl"; }
  std::vector<nlohmann::json> events(const std::string& name) const {
    std::ifstream in(events_path());
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);) {
      auto event = nlohmann::json::parse(line, nullptr, false);
      if (!event.is_discarded() && event.value("event", "") == name) out.push_back(event);
    }
    return out;
  }

  TempDir dir_;      // the workspace
  TempDir outside_;  // the event log, out of the sandbox's reach
  std::string policy_;
};

TEST_F(DnsTest, AllowedNameResolvesToASyntheticAddress) {
  SandboxRun r = run({kGetent, "ahostsv4", "allowed.example"});
  ASSERT_EQ(0, r.status) << r.err;
  // Pinned to 127.0.0.2, but the sandbox only ever sees its synthetic address.
  EXPECT_EQ(0u, r.out.rfind("198.18.0.1 ", 0)) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("127.0.0.2")) << r.out;
  EXPECT_TRUE(events("net.denied").empty());
}

TEST_F(DnsTest, DeniedNamesDoNotExistAndAreReported) {
  const std::string script =
      "import socket\n"
      "for name in ('unlisted.example', 'blocked.example'):\n"
      "    try:\n"
      "        socket.getaddrinfo(name, 443)\n"
      "        print(name, 'resolved')\n"
      "    except socket.gaierror as e:\n"
      "        print(name, 'EAI_NONAME' if e.errno == socket.EAI_NONAME else e)\n";
  SandboxRun r = run({kPython, "-c", script});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ("unlisted.example EAI_NONAME\nblocked.example EAI_NONAME\n", r.out);
  auto denied = events("net.denied");
  ASSERT_EQ(2u, denied.size()) << r.out;  // one per name, although each lookup asked for A and AAAA
  EXPECT_EQ("dns", denied[0]["protocol"]);
  EXPECT_EQ("unlisted.example", denied[0]["host"]);
  EXPECT_EQ(0, denied[0]["port"]);
  EXPECT_EQ("on_unlisted: deny", denied[0]["rule"]);
  EXPECT_EQ("blocked.example", denied[1]["host"]);
  EXPECT_EQ("deny blocked.example", denied[1]["rule"]);
}

TEST_F(DnsTest, AskNamesAreAnsweredWithoutAQuestion) {
  write_policy("ask");
  SandboxRun r = run({kGetent, "ahostsv4", "unlisted.example"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ(0u, r.out.rfind("198.18.0.1 ", 0)) << r.out;
  EXPECT_TRUE(events("net.ask").empty());  // asked at connect time, with the port
  SandboxRun blocked = run({kGetent, "ahostsv4", "blocked.example"});
  EXPECT_EQ(2, blocked.status) << blocked.out;  // getent: key not found
}

TEST_F(DnsTest, ResolvConfNamesTheStub) {
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::symlink_status("/etc/resolv.conf", error))) {
    // A host without any /etc/resolv.conf (Debian's kernel guests of tools/kernels): nothing to cover, and /etc
    // stays the host's, read-only. libc's default server is 127.0.0.1:53, the stub: an unlisted name under `ask`
    // gets its synthetic address from it all the same.
    SandboxRun absent = run({"/bin/cat", "/etc/resolv.conf"});
    EXPECT_NE(0, absent.status) << absent.out;
    write_policy("ask");
    SandboxRun stub = run({kGetent, "ahostsv4", "unlisted.example"});
    ASSERT_EQ(0, stub.status) << stub.err;
    EXPECT_EQ(0u, stub.out.rfind("198.18.0.1 ", 0)) << stub.out;
    SandboxRun write = run({"/bin/sh", "-c", "echo nameserver 192.0.2.1 > /etc/resolv.conf"});
    EXPECT_NE(0, write.status);  // no server can be named in its place
    return;
  }
  SandboxRun r = run({"/bin/cat", "/etc/resolv.conf"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("\nnameserver 127.0.0.1\n")) << r.out;
  std::istringstream lines(r.out);
  int nameservers = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("nameserver", 0) == 0) ++nameservers;
    EXPECT_NE(0u, line.rfind("search", 0)) << "no search list: " << r.out;
  }
  EXPECT_EQ(1, nameservers) << r.out;
  SandboxRun write = run({"/bin/sh", "-c", "echo nameserver 192.0.2.1 > /etc/resolv.conf"});
  EXPECT_NE(0, write.status);  // read-only
  // The neighbour: without a network there is no stub, and the file is the host's, untouched.
  std::ifstream host("/etc/resolv.conf");
  std::stringstream host_text;
  host_text << host.rdbuf();
  SandboxRun none = run({"/bin/cat", "/etc/resolv.conf"}, {"--net", "none"});
  if (host) {
    EXPECT_EQ(0, none.status) << none.err;
    EXPECT_EQ(host_text.str(), none.out);
  } else {
    EXPECT_NE(0, none.status);
  }
}

TEST_F(DnsTest, QueriesOverTcp) {
  // Landlock allows TCP connect to the stub's port (53) as to the relay's; the stub answers framed queries.
  SandboxRun r = run({kPython, dir_.path() + "/tcp_query.py", "allowed.example"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ("0 1 198.18.0.1\n", r.out);
  SandboxRun denied = run({kPython, dir_.path() + "/tcp_query.py", "unlisted.example"});
  ASSERT_EQ(0, denied.status) << denied.err;
  EXPECT_EQ("3 0 -\n", denied.out);  // NXDOMAIN
}

// The `file` mount step (what /etc/resolv.conf gets) over a dangling symlink, as systemd-resolved's hosts have:
// the link is covered, not followed, so its target need not exist inside; the file is read-only.
class FileStep : public ::testing::Test {
 protected:
  // Runs `sh -c script` in a sandbox whose spec ends with `step`; its stdout, or "create: <error>".
  std::string run_with(const MountStep& step, const std::string& script) {
    CompileContext context = CompileContext::from_process();
    PolicyOverrides overrides;
    overrides.workspace = w_.ws();
    overrides.net_mode = "none";  // no resolv.conf step of its own
    auto spec = compile_policy(PolicySource{w_.policy(), ""}, overrides, context);
    if (!spec.is_ok()) return "compile: " + spec.status().message();
    spec->mounts.push_back(step);
    NullEventSink events;
    auto sandbox = Sandbox::create(*spec, events);
    if (!sandbox.is_ok()) return "create: " + sandbox.status().message();
    SpawnRequest request;
    request.argv = {"/bin/sh", "-c", script};
    auto spawned = (*sandbox)->spawn(request);
    if (!spawned.is_ok()) return "spawn: " + spawned.status().message();
    spawned->stdin_fd.reset();
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(spawned->stdout_fd.get(), buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    (void)(*sandbox)->wait(spawned->id);
    return out;
  }
  SandboxWorkspace w_;
};

TEST_F(FileStep, CoversASymlinkWithoutFollowingIt) {
  const std::string link = w_.ws() + "/resolv.link";
  ASSERT_EQ(0, ::symlink("../run/nowhere/stub-resolv.conf", link.c_str()));
  MountStep step{MountStep::Kind::file, "nameserver 127.0.0.1\n", link, false, false};
  EXPECT_EQ("nameserver 127.0.0.1\nnot a link\nread-only\n",
            run_with(step, "cat " + link + "; readlink " + link + " || echo not a link; "
                           "(echo x > " + link + ") 2>/dev/null || echo read-only"));
  char target[256] = {};
  EXPECT_EQ(31, ::readlink(link.c_str(), target, sizeof target));  // the host's link is untouched
  EXPECT_FALSE(std::filesystem::exists(w_.ws() + "/../run"));
}

TEST_F(FileStep, CoversAFile) {
  MountStep step{MountStep::Kind::file, "inside\n", w_.ws() + "/public.txt", false, false};
  EXPECT_EQ("inside\n", run_with(step, "cat " + w_.ws() + "/public.txt"));
  EXPECT_NE("inside\n", SandboxWorkspace::read(w_.ws() + "/public.txt"));
}

TEST_F(FileStep, MissingTargetIsSkippedOnlyWhenOptional) {
  MountStep step{MountStep::Kind::file, "x\n", w_.ws() + "/absent.conf", true, false};
  EXPECT_EQ("absent\n", run_with(step, "test -e " + w_.ws() + "/absent.conf || echo absent"));
  step.optional = false;
  // The sandbox does not start. (Init's own message, naming the step, usually arrives; when the supervisor's
  // receive sees init's socket reset first, it says only that.)
  std::string failed = run_with(step, "true");
  EXPECT_EQ(0u, failed.rfind("create: ", 0)) << failed;
}

}  // namespace
}  // namespace oishell::test
