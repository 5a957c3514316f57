// End to end (issue 16): git over https through a terminated host. The upstream serves a bare repository by git's
// "dumb HTTP" protocol (static files after `git update-server-info`); the policy allows GET under /repo.git/ only,
// so a clone works, and a push (WebDAV methods) or a clone of another path is refused by the relay.
#include <string>

#include "base/base64.h"
#include "tests/relay/enforcement/https_fixture.h"

namespace oishell::test {
namespace {

class RelayHttpsGit : public RelayHttpsFixture {
 protected:
  void SetUp() override {
    RelayHttpsFixture::SetUp();
    if (HasFatalFailure()) return;
    // A bare repository with two commits, made on the host (git's own configuration kept out: HOME is the
    // repository's directory). `update-server-info` writes info/refs and objects/info/packs for dumb HTTP.
    SandboxRun made = run_on_host(
        {"/bin/sh", "-c",
         "set -e; export HOME=" + repos_.path() + " GIT_CONFIG_NOSYSTEM=1; cd " + repos_.path() + "; "
         "git init -q --bare -b main repo.git; git init -q -b main src; cd src; "
         "git -c user.name=t -c user.email=t@example.test commit -q --allow-empty -m first; "
         "echo hello > f; git add f; git -c user.name=t -c user.email=t@example.test commit -q -m second; "
         "git push -q ../repo.git main; cd ../repo.git; git update-server-info"});
    ASSERT_EQ(0, made.status) << made.err;
    server_.serve_directory("/repo.git", repos_.path() + "/repo.git");
    server_.serve_directory("/other.git", repos_.path() + "/repo.git");
    use_rules(api_rule("[GET]", R"(["/repo.git/**"])"));
  }
  TempDir repos_;
};

TEST_F(RelayHttpsGit, CloneOverDumbHttpWorksWherePathsAllow) {
  SandboxRun r = sh("git clone -q " + base_ + "/repo.git clone && git -C clone log --format=%s && cat clone/f");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("second\nfirst\nhello\n", r.out) << r.err;
  for (const auto& head : server_.request_heads()) EXPECT_TRUE(head.starts_with("GET /repo.git/")) << head;

  // The neighbour: the same repository under a path no rule allows is refused before it reaches the server.
  const size_t before = heads_received();
  SandboxRun other = sh("git clone -q " + base_ + "/other.git other; echo \"status $?\"");
  EXPECT_EQ(0, other.status) << other.err;
  EXPECT_EQ("status 128\n", other.out) << other.err;
  EXPECT_NE(std::string::npos, other.err.find("The requested URL returned error: 403")) << other.err;
  EXPECT_EQ(before, heads_received());
}

TEST_F(RelayHttpsGit, PushIsRefused) {
  // Dumb HTTP pushes by WebDAV (PROPFIND, MKCOL, PUT, MOVE): methods the rule does not allow.
  SandboxRun r = sh("git clone -q " + base_ + "/repo.git clone && cd clone && echo change > f && "
                    "git -c user.name=t -c user.email=t@example.test commit -q -am third && "
                    "git push -q origin main; echo \"push $?\"");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("push 1\n", r.out) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("fatal: git-http-push failed")) << r.err;
  for (const auto& head : server_.request_heads()) EXPECT_TRUE(head.starts_with("GET /repo.git/")) << head;
  EXPECT_NE(std::string::npos, events().find("\"method\":\"PROPFIND\"")) << events();
}

TEST_F(RelayHttpsGit, CloneWithATokenInBasicCredentialsGetsTheSecretOutsideOnly) {
  // How CI systems give git a token: `http.extraHeader` with Basic credentials of a user and the token (here the
  // placeholder). The relay decodes them, puts the secret in place of the placeholder and encodes them again.
  use_rules(R"(    - host: api.example.test
      ports: [)" + port_ + R"(]
      tls: terminate
      upstream_ca: )" + server_.ca_file() + R"(
      methods: [GET]
      paths: ["/repo.git/**"]
      credentials: [{name: git, env: GIT_TOKEN, scheme: Basic, from_env: OISHELL_TEST_SECRET}]
)");
  SandboxRun r = sh("git -c http.extraHeader=\"Authorization: Basic $(printf 'x-access-token:%s' \"$GIT_TOKEN\" | "
                    "base64 -w0)\" clone -q " + base_ + "/repo.git clone && cat clone/f");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("hello\n", r.out) << r.err;
  const std::string sent = "Authorization: Basic " + base64_encode(std::string("x-access-token:") + kSecret) + "\r\n";
  auto heads = server_.request_heads();
  ASSERT_FALSE(heads.empty());
  for (const auto& head : heads) EXPECT_NE(std::string::npos, head.find(sent)) << head;
  EXPECT_NE(std::string::npos, events().find("\"credential\":\"git\"")) << events();

  // The neighbour: the same header sent to a path no rule allows is refused before anything is sent.
  const size_t before = heads_received();
  SandboxRun other = sh("git -c http.extraHeader=\"Authorization: Basic $(printf 'x-access-token:%s' \"$GIT_TOKEN\" | "
                        "base64 -w0)\" clone -q " + base_ + "/other.git other; echo \"status $?\"");
  EXPECT_EQ("status 128\n", other.out) << other.err;
  EXPECT_EQ(before, heads_received());
}

}  // namespace
}  // namespace oishell::test
