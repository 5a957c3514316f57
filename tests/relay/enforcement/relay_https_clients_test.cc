// End to end (issue 16): clients other than curl through a terminated host, each decided like curl (GET allowed
// with the secret added outside, POST refused with the JSON 403): python's http.client through the proxy (CONNECT
// by set_tunnel), and two clients that ignore the proxy variables, node's https and a python socket wrapped in
// TLS, whose connect(2) the connect broker joins to the same inspecting path. Each trusts the sandbox's
// authority through the variables the sandbox sets (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS).
#include <string>

#include "tests/relay/enforcement/https_fixture.h"

namespace oishell::test {
namespace {

class RelayHttpsClients : public RelayHttpsFixture {
 protected:
  // What every client here prints for its GET /bytes/7 with the credential, then its POST /bytes/1.
  static std::string expected() {
    return "200 7\n403 {\"error\":\"policy_denied\",\"host\":\"api.example.test\",\"method\":\"POST\","
           "\"path\":\"/bytes/1\",\"rule\":\"no rule allows this method and path\"}\n";
  }
  // The GET arrived with the secret in place of the placeholder; the POST did not arrive.
  void expect_upstream_saw_one_get_with_the_secret() {
    auto heads = server_.request_heads();
    ASSERT_EQ(1u, heads.size());
    EXPECT_TRUE(heads[0].starts_with("GET /bytes/7 HTTP/1.1\r\n")) << heads[0];
    EXPECT_NE(std::string::npos, heads[0].find(std::string("Authorization: Bearer ") + kSecret)) << heads[0];
    EXPECT_EQ(std::string::npos, heads[0].find("oishell-cred-")) << heads[0];
  }
};

TEST_F(RelayHttpsClients, PythonHttpClientThroughTheProxyTunnel) {
  dir_.write("client.py", R"(import http.client, os, ssl, urllib.parse
proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
c = http.client.HTTPSConnection(proxy.hostname, proxy.port, context=ssl.create_default_context(), timeout=20)
c.set_tunnel("api.example.test", )" + port_ + R"()
c.request("GET", "/bytes/7", headers={"Authorization": "Bearer " + os.environ["TEST_TOKEN"]})
r = c.getresponse()
print(r.status, len(r.read()))
c.request("POST", "/bytes/1", body=b"x")
r = c.getresponse()
print(r.status, r.read().decode())
)");
  SandboxRun r = sh("python3 client.py");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(expected(), r.out) << r.err;
  expect_upstream_saw_one_get_with_the_secret();
  EXPECT_NE(std::string::npos, events().find("\"protocol\":\"http-connect\"")) << events();
}

TEST_F(RelayHttpsClients, NodeHttpsIgnoresTheProxyAndIsBrokeredToTheSamePath) {
  // node does not read HTTPS_PROXY: it resolves the name (the sandbox's DNS stub) and connects itself; the broker
  // joins that connection to the relay, which terminates it as it does a CONNECT.
  dir_.write("client.js", R"(const https = require("https");
function request(method, path, body) {
  return new Promise((resolve) => {
    const r = https.request({host: "api.example.test", port: )" + port_ + R"(, path, method, agent: false,
                             headers: {Authorization: "Bearer " + process.env.TEST_TOKEN}}, (res) => {
      let data = "";
      res.setEncoding("latin1");
      res.on("data", (d) => data += d);
      res.on("end", () => resolve(res.statusCode + " " + (res.statusCode === 200 ? data.length : data)));
    });
    r.on("error", (e) => resolve("error " + e.message));
    r.end(body);
  });
}
(async () => {
  console.log(await request("GET", "/bytes/7"));
  console.log(await request("POST", "/bytes/1", "x"));
})();
)");
  SandboxRun r = sh("node client.js");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(expected(), r.out) << r.err;
  expect_upstream_saw_one_get_with_the_secret();
  EXPECT_NE(std::string::npos, events().find("\"protocol\":\"transparent\"")) << events();
  EXPECT_EQ(std::string::npos, events().find("\"protocol\":\"http-connect\"")) << events();
}

TEST_F(RelayHttpsClients, PythonSocketIgnoringTheProxyIsBrokeredToTheSamePath) {
  // socket.create_connection + the default context's wrap_socket: no proxy, the bundle from SSL_CERT_FILE.
  dir_.write("client.py", R"(import os, socket, ssl
context = ssl.create_default_context()
def request(method, path, extra=""):
    s = context.wrap_socket(socket.create_connection(("api.example.test", )" + port_ + R"(), timeout=20),
                            server_hostname="api.example.test")
    s.sendall((method + " " + path + " HTTP/1.1\r\nHost: api.example.test:)" + port_ + R"(\r\n" + extra +
               "Authorization: Bearer " + os.environ["TEST_TOKEN"] + "\r\nConnection: close\r\n\r\n").encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
    while len(body) < length:
        body += s.recv(65536)
    s.close()
    return head.split(b" ")[1].decode() + " " + (str(len(body)) if head.startswith(b"HTTP/1.1 200") else body.decode())
print(request("GET", "/bytes/7"))
print(request("POST", "/bytes/1", "Content-Length: 0\r\n"))
)");
  SandboxRun r = sh("env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy -u ALL_PROXY python3 client.py");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(expected(), r.out) << r.err;
  expect_upstream_saw_one_get_with_the_secret();
  EXPECT_NE(std::string::npos, events().find("\"protocol\":\"transparent\"")) << events();
}

}  // namespace
}  // namespace oishell::test
