// End to end (issue 33, findings 2 and 9): `oishell run` with curl inside, the HTTPS upstream of
// https_fixture.h on the host's 127.0.0.2. An upstream that echoes the request's Authorization header in a chunked
// body, padded by the sandbox so that the secret straddles a chunk boundary, gives the sandbox asterisks (before, the
// secret split by a chunk-size line passed the scrubber and curl joined it again); a double-encoded path is refused.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/relay/enforcement/https_fixture.h"

namespace oishell::test {
namespace {

class RelayHttpsEchoTest : public RelayHttpsFixture {
 protected:
  void SetUp() override {
    RelayHttpsFixture::SetUp();
    use_rules(api_rule("[GET, HEAD]", R"(["/bytes/**", /head, "/echo/**"])"));
  }
  // A file the script wrote in the workspace (its working directory).
  std::string workspace_file(const std::string& name) const {
    std::ifstream in(dir_.path() + "/" + name, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
};

// `raw` (a chunked body as it came) de-chunked, with the size of each chunk in `sizes`; empty and false on a
// framing error.
bool dechunk(const std::string& raw, std::string& body, std::vector<size_t>& sizes) {
  size_t at = 0;
  for (;;) {
    const size_t eol = raw.find("\r\n", at);
    if (eol == std::string::npos) return false;
    const size_t size = std::stoul(raw.substr(at, eol - at), nullptr, 16);
    at = eol + 2;
    if (size == 0) return raw.substr(at) == "\r\n";
    if (at + size + 2 > raw.size() || raw.substr(at + size, 2) != "\r\n") return false;
    body += raw.substr(at, size);
    sizes.push_back(size);
    at += size + 2;
  }
}

TEST_F(RelayHttpsEchoTest, AnEchoedSecretStraddlingChunkBoundariesReachesTheSandboxAsAsterisks) {
  // The attack as the sandbox would run it: learn where the secret lands from an echo with Content-Length (its
  // asterisks show the place), then pad a header before Authorization so that, echoed in 4096-byte chunks, the
  // secret starts 9 bytes before the first boundary. With 1- and 8-byte chunks the 18-byte secret straddles anyway.
  const std::string secret(kSecret);
  const std::string stars(secret.size(), '*');
  SandboxRun r = sh(
      "h=$(curl -sS -m 20 -H 'X-Pad: p' -H \"Authorization: Bearer $TEST_TOKEN\" " + base_ + "/head); "
      "pre=${h%%Bearer \\**}; off=${#pre}; "
      "for n in 1 8 4096; do "
      "  p=/echo/chunked/$n; s=$((off + 7 + ${#p} - 5)); extra=$(( ((4096 - 9 - s) % 4096 + 4096) % 4096 )); "
      "  [ $n = 4096 ] || extra=0; pad=$(printf \"%0$((extra + 1))d\" 0 | tr 0 p); "
      "  curl -sS -m 20 -H \"X-Pad: $pad\" -H \"Authorization: Bearer $TEST_TOKEN\" " + base_ + "$p -o body.$n; "
      "  echo \"$n: $?\"; "
      "  curl -sS -m 20 --raw -H \"X-Pad: $pad\" -H \"Authorization: Bearer $TEST_TOKEN\" " + base_ + "$p -o raw.$n; "
      "done");
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ("1: 0\n8: 0\n4096: 0\n", r.out) << r.err;
  for (const std::string n : {"1", "8", "4096"}) {
    SCOPED_TRACE("chunks of " + n);
    const std::string body = workspace_file("body." + n);
    EXPECT_EQ(std::string::npos, body.find(secret)) << body.substr(0, 400);
    const size_t at = body.find("Authorization: Bearer " + stars + "\r\n");
    ASSERT_NE(std::string::npos, at) << body.substr(0, 400);
    // The raw body is valid chunked, in the upstream's chunk sizes, and the secret did straddle a boundary.
    std::string joined;
    std::vector<size_t> sizes;
    ASSERT_TRUE(dechunk(workspace_file("raw." + n), joined, sizes));
    EXPECT_EQ(body, joined);
    const size_t chunk = std::stoul(n);
    for (size_t i = 0; i + 1 < sizes.size(); ++i) EXPECT_EQ(chunk, sizes[i]);
    const size_t secret_at = at + std::string("Authorization: Bearer ").size();
    EXPECT_NE(secret_at / chunk, (secret_at + secret.size() - 1) / chunk) << "the secret did not straddle";
    if (n == "4096") {
      EXPECT_EQ(4096u - 9, secret_at) << body.substr(0, 200);
    }
  }
  EXPECT_NE(std::string::npos, events().find("\"event\":\"net.secret_withheld\"")) << events();
  EXPECT_EQ(std::string::npos, events().find(kSecret));
}

TEST_F(RelayHttpsEchoTest, AnEchoInAResponseHeaderIsWithheldAndAnAnswerWithoutTheSecretPassesAsItIs) {
  SandboxRun r = sh("curl -sS -m 20 -D - -o /dev/null -H \"Authorization: Bearer $TEST_TOKEN\" " + base_ +
                    "/echo/header; curl -sS -m 20 --raw -H 'X-Other: v' " + base_ + "/echo/chunked/8 -o raw");
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos,
            r.out.find("X-Echo-Authorization: Bearer " + std::string(std::string(kSecret).size(), '*') + "\r\n"))
      << r.out;
  EXPECT_EQ(std::string::npos, r.out.find(kSecret)) << r.out;
  // The neighbour: no credential, no secret: the chunked echo is the request head as the upstream got it, in
  // 8-byte chunks, nothing overwritten.
  std::string body;
  std::vector<size_t> sizes;
  ASSERT_TRUE(dechunk(workspace_file("raw"), body, sizes));
  auto heads = server_.request_heads();
  ASSERT_FALSE(heads.empty());
  EXPECT_EQ(heads.back(), body);
  EXPECT_NE(std::string::npos, body.find("X-Other: v\r\n")) << body;
  EXPECT_EQ(std::string::npos, body.find("**")) << body;
}

TEST_F(RelayHttpsEchoTest, ADoubleEncodedPathIsRefusedWhereAPathRuleDecides) {
  const size_t before = heads_received();
  SandboxRun r = sh("curl -sS -m 20 --path-as-is " + base_ + "/bytes/%252e%252e/head -w '\\n%{http_code}\\n'; "
                    "curl -sS -m 20 " + base_ + "/bytes/10 -o /dev/null -w '%{http_code}\\n'");
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ("{\"error\":\"policy_denied\",\"host\":\"api.example.test\",\"method\":\"GET\",\"path\":\"/bytes/%2e%2e/head\","
            "\"rule\":\"a rule with paths admits no percent-encoded percent (%25XX) in the path\","
            "\"reason\":\"the path holds %25 and two hex digits, an escape encoded twice: the rules match it decoded "
            "once, and a server that decodes it again would serve another path\"}\n403\n200\n",
            r.out);
  EXPECT_EQ(before + 1, heads_received());  // only the neighbour's GET reached the upstream
  EXPECT_NE(std::string::npos, events().find("\"event\":\"net.denied\"")) << events();
  EXPECT_NE(std::string::npos, events().find("percent-encoded percent")) << events();
}

}  // namespace
}  // namespace oishell::test
