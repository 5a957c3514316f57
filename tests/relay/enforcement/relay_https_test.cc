// End to end (issue 16): `oishell run` with curl and python inside, an HTTPS upstream on the host's 127.0.0.2 whose
// certificate comes from a test CA (the policy's upstream_ca). The relay ends TLS for the host, decides each
// request by method and path, and puts the secret in place of the placeholder only outside the sandbox.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tests/relay/enforcement/https_fixture.h"

namespace oishell::test {
namespace {

class RelayHttpsTest : public RelayHttpsFixture {};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_F(RelayHttpsTest, RequestsAreDecidedByMethodAndPathOnTheSameConnection) {
  // One curl, two requests on one kept-alive connection: the GET passes, the POST gets the JSON 403.
  SandboxRun r = sh("curl -sS -m 20 " + base_ + "/bytes/100 -o /dev/null -w '%{http_code}\\n' --next -sS -m 20 -X POST "
                    "-d x " + base_ + "/bytes/1 -w '\\n%{http_code} %{num_connects}\\n'");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("200\n{\"error\":\"policy_denied\",\"host\":\"api.example.test\",\"method\":\"POST\",\"path\":\"/bytes/1\","
            "\"rule\":\"no rule allows this method and path\"}\n403 0\n",
            r.out)
      << r.err;
  // The POST never reached the server.
  for (const auto& head : server_.request_heads()) EXPECT_FALSE(head.starts_with("POST")) << head;
}

TEST_F(RelayHttpsTest, Http10RequestsAreDecidedToo) {
  // HTTP/1.0 (no keep-alive, no Host required by the version; curl sends one): the same rules.
  SandboxRun r = sh("curl -sS -m 20 --http1.0 " + base_ + "/bytes/10 -o /dev/null -w '%{http_code}\\n'; "
                    "curl -sS -m 20 --http1.0 -X POST -d x " + base_ + "/bytes/1 -w '\\n%{http_code}\\n'");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("200\n{\"error\":\"policy_denied\",\"host\":\"api.example.test\",\"method\":\"POST\",\"path\":\"/bytes/1\","
            "\"rule\":\"no rule allows this method and path\"}\n403\n",
            r.out)
      << r.err;
  auto heads = server_.request_heads();
  ASSERT_EQ(1u, heads.size());
  EXPECT_TRUE(heads[0].starts_with("GET /bytes/10 HTTP/1.0\r\n")) << heads[0];
}

TEST_F(RelayHttpsTest, TheSecretIsAddedOutsideAndNeverInside) {
  SandboxRun r = sh("curl -sS -m 20 -H \"Authorization: Bearer $TEST_TOKEN\" " + base_ +
                    "/bytes/10 -o /dev/null -w '%{http_code}\\n'; "
                    "echo \"$TEST_TOKEN\" | cut -c1-17; "
                    "cat /proc/self/environ | tr '\\0' '\\n' | grep -c " + std::string(kSecret) + "; "
                    "grep -rl " + std::string(kSecret) + " /etc /tmp \"$HOME\" 2>/dev/null | wc -l");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("200\noishell-cred-test\n0\n0\n", r.out) << r.err;
  auto heads = server_.request_heads();
  ASSERT_FALSE(heads.empty());
  EXPECT_NE(std::string::npos, heads.back().find(std::string("Authorization: Bearer ") + kSecret)) << heads.back();
  EXPECT_EQ(std::string::npos, heads.back().find("oishell-cred-")) << heads.back();
  EXPECT_NE(std::string::npos, events().find("\"event\":\"net.credential\"")) << events();
  EXPECT_EQ(std::string::npos, events().find(kSecret));
  // The neighbour: the placeholder in the URL is refused, naming the credential, and reaches nobody.
  const size_t before = heads_received();
  SandboxRun leak = sh("curl -sS -m 20 \"" + base_ + "/bytes/1?t=$TEST_TOKEN\" -w '\\n%{http_code}\\n'");
  EXPECT_NE(std::string::npos, leak.out.find("\"error\":\"credential_refused\"")) << leak.out << leak.err;
  EXPECT_NE(std::string::npos, leak.out.find("\n403\n")) << leak.out;
  EXPECT_EQ(before, heads_received());
}

TEST_F(RelayHttpsTest, AnUpstreamEchoingTheRequestGivesTheSandboxAsterisksForTheSecret) {
  // GET /head answers with the request head it received: the secret the relay put in comes back, withheld.
  SandboxRun r = sh("curl -sS -m 20 --compressed -H \"Authorization: Bearer $TEST_TOKEN\" " + base_ + "/head");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(std::string::npos, r.out.find(kSecret)) << r.out;
  EXPECT_NE(std::string::npos,
            r.out.find("Authorization: Bearer " + std::string(std::string(kSecret).size(), '*') + "\r\n"))
      << r.out;
  EXPECT_NE(std::string::npos, r.out.find("Accept-Encoding: identity\r\n")) << r.out;  // curl's gzip not passed on
  EXPECT_NE(std::string::npos, events().find("\"event\":\"net.secret_withheld\"")) << events();
  EXPECT_EQ(std::string::npos, events().find(kSecret));
  // The neighbour: without the credential the echo comes back as it was sent, the client's encodings included.
  SandboxRun plain = sh("curl -sS -m 20 --compressed " + base_ + "/head");
  EXPECT_EQ(0, plain.status) << plain.err;
  EXPECT_NE(std::string::npos, plain.out.find("Accept-Encoding: deflate, gzip")) << plain.out;
  EXPECT_EQ(std::string::npos, plain.out.find("*****")) << plain.out;
}

TEST_F(RelayHttpsTest, TheSecretIsInNoProcessEnvironmentNorFileInside) {
  // Several processes (the shell, a background sleep): every environment readable inside holds the placeholder (the
  // neighbour: the loop does read them) and none the secret; the sandbox's init (pid 1) is not readable inside
  // (the next test reads it from outside). Without the sandbox the secret would be in every one of them (it is in
  // oishell's environment).
  // The loop starts once the sleep has exec-ed: mid-exec, a process's environ reads empty (the kernel installs the
  // new memory before it records where its arguments and environment are). So the wait is for the exact argv of the
  // sleep and then a non-empty environment: before its exec the child's cmdline is the shell's own, whose script
  // names "sleep" too (waiting for the word "sleep" alone passed at once, and CI read an empty environ once).
  SandboxRun r = sh("sleep 5 & "
                    "until [ \"$(tr '\\0' ' ' < /proc/$!/cmdline 2>/dev/null)\" = 'sleep 5 ' ] && "
                    "grep -qa . /proc/$!/environ 2>/dev/null; do :; done; "
                    "n=0; u=; for f in /proc/[0-9]*/environ; do "
                    "if tr '\\0' '\\n' < $f > /tmp/env.$n 2>/dev/null; then n=$((n+1)); "
                    "else u=\"$u ${f%/environ}\"; fi; done; "
                    "echo $n read, unreadable:$u; cat /tmp/env.* | grep -c '^TEST_TOKEN=oishell-cred-test-' | "
                    "awk -v n=$n '{print ($1 == n) ? \"placeholder in each\" : \"placeholder in \" $1}'; "
                    "cat /tmp/env.* | grep -c " + std::string(kSecret) + "; "
                    "grep -rl -D skip " + std::string(kSecret) + " / /dev/shm --exclude-dir=proc --exclude-dir=sys "
                    "--exclude-dir=usr --exclude-dir=dev 2>/dev/null | wc -l; "
                    "grep -c BEGIN \"$SSL_CERT_FILE\" | awk '{print ($1 > 1) ? \"bundle read\" : \"bundle empty\"}'; "
                    "kill $!");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("2 read, unreadable: /proc/1\nplaceholder in each\n0\n0\nbundle read\n", r.out) << r.err;
}

TEST_F(RelayHttpsTest, TheSecretIsInNoSandboxProcessEnvironmentSeenFromOutside) {
  // The same from outside, where init's environment can be read too: every process from the sandbox's init down.
  BackgroundOishell bg = start_oishell({"--policy", policy_, "--workspace", dir_.path()},
                                       {"/bin/sh", "-c", "sleep 30 & wait"});
  std::vector<pid_t> inside;
  for (int i = 0; i < 100 && inside.size() < 3; ++i) {  // init, sh, sleep
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    inside.clear();
    for (pid_t p : descendants_of(bg.pid)) {
      if (read_file("/proc/" + std::to_string(p) + "/comm") != "oishell-init\n") continue;
      inside.push_back(p);
      for (pid_t q : descendants_of(p)) inside.push_back(q);
    }
  }
  int read = 0;
  std::string environments;
  for (pid_t p : inside) {
    std::string environment = read_file("/proc/" + std::to_string(p) + "/environ");
    if (!environment.empty()) ++read;
    environments += environment;
  }
  ::kill(bg.pid, SIGTERM);
  if (wait_for_exit(bg.pid, 10000) == -1) {
    ADD_FAILURE() << "oishell did not end on SIGTERM";
    ::kill(bg.pid, SIGKILL);
    wait_for_exit(bg.pid, 10000);
  }
  ::close(bg.stderr_fd);
  ASSERT_GE(inside.size(), 3u);
  // Root reads them all (init's environment is empty: it was started without one); an ordinary user may not read
  // a non-dumpable init's, and reads sh's and sleep's.
  EXPECT_GE(read, 2);
  EXPECT_NE(std::string::npos, environments.find("TEST_TOKEN=oishell-cred-test-"));
  EXPECT_EQ(std::string::npos, environments.find(kSecret));
}

TEST_F(RelayHttpsTest, APlaceholderIsRefusedForAnotherHostAndInAnotherHeader) {
  use_rules(api_rule("[GET, HEAD]", R"(["/bytes/**", /head])") + R"(    - host: other.example.test
      ports: [)" + port_ + R"(]
      tls: terminate
      upstream_ca: )" + server_.ca_file() + R"(
      methods: [GET]
)");
  const std::string other = "https://other.example.test:" + port_;
  SandboxRun r = sh("curl -sS -m 20 " + other + "/bytes/3 -o /dev/null -w '%{http_code}\\n'; "
                    "curl -sS -m 20 -H \"Authorization: Bearer $TEST_TOKEN\" " + other +
                    "/bytes/3 -w '\\n%{http_code}\\n'; "
                    "curl -sS -m 20 -H \"Authorization: Bearer $TEST_TOKEN\" " + base_ +
                    "/bytes/3 -o /dev/null -w '%{http_code}\\n'; "
                    "curl -sS -m 20 -H \"Authorization: Bearer $TEST_TOKEN\" -H \"X-Other: $TEST_TOKEN\" " + base_ +
                    "/bytes/3 -w '\\n%{http_code}\\n'");
  EXPECT_EQ(0, r.status) << r.err;
  // The other host without the placeholder: allowed. With it: refused, though the host is allowed. The bound
  // host with it in its header: allowed; with it in a second header as well: refused.
  EXPECT_EQ("200\n"
            "{\"error\":\"credential_refused\",\"host\":\"other.example.test\",\"method\":\"GET\","
            "\"path\":\"/bytes/3\",\"credential\":\"test\","
            "\"reason\":\"in header Authorization; the credential is not bound to this host\"}\n403\n"
            "200\n"
            "{\"error\":\"credential_refused\",\"host\":\"api.example.test\",\"method\":\"GET\",\"path\":\"/bytes/3\","
            "\"credential\":\"test\",\"reason\":\"in header X-Other; it is put in only as `Authorization: Bearer "
            "<placeholder>`\"}\n403\n",
            r.out)
      << r.err;
  // Only the two allowed requests arrived, and neither carried a placeholder.
  auto heads = server_.request_heads();
  ASSERT_EQ(2u, heads.size());
  for (const auto& head : heads) EXPECT_EQ(std::string::npos, head.find("oishell-cred-")) << head;
  EXPECT_EQ(std::string::npos, heads[0].find(kSecret)) << heads[0];
  EXPECT_NE(std::string::npos, heads[1].find(kSecret)) << heads[1];
}

TEST_F(RelayHttpsTest, AClientPinningItsOwnAuthorityFailsVerification) {
  // The upstream's real CA, as a client that pins it would (without the sandbox this pin would succeed): inside,
  // the relay answers with the sandbox's authority, so the pin fails (curl exit 60: certificate verification).
  std::ifstream in(server_.ca_file());
  dir_.write("pinned.pem", std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  SandboxRun r = sh("curl -sS -m 20 --cacert pinned.pem " + base_ + "/bytes/3 -o /dev/null; echo \"pinned: $?\"; "
                    "curl -sS -m 20 " + base_ + "/bytes/3 -o /dev/null -w '%{http_code}\\n'; echo \"bundle: $?\"");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("pinned: 60\n200\nbundle: 0\n", r.out) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("SSL certificate problem")) << r.err;
  EXPECT_EQ(1u, heads_received());
}

TEST_F(RelayHttpsTest, PythonTrustsTheSandboxAuthorityThroughTheBundle) {
  SandboxRun r = sh("python3 -c \"import urllib.request,os; print(urllib.request.urlopen('" + base_ +
                    "/bytes/5').status)\"");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("200\n", r.out) << r.err;
}

}  // namespace
}  // namespace oishell::test
