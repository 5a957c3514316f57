// End to end (issue 16): what the relay refuses on a terminated host besides a rule's methods and paths: an
// upstream whose certificate the policy's upstream_ca did not sign (the client is told by a 502 with a JSON body,
// and the event log says why), and malformed, ambiguous or oversized requests inside TLS (a 4xx, then the
// connection ends).
#include <string>

#include "tests/relay/enforcement/https_fixture.h"

namespace oishell::test {
namespace {

class RelayHttpsRefusal : public RelayHttpsFixture {};

TEST_F(RelayHttpsRefusal, AnUpstreamCertificateNotSignedByUpstreamCaIsRefused) {
  // An impostor on 127.0.0.3 with a certificate for the same name from another authority. The policy pins the
  // name to it but trusts only the real server's CA.
  relay::testing::TlsTestServer impostor("127.0.0.3", {"api.example.test"});
  ASSERT_TRUE(impostor.ok());
  const std::string url = "https://api.example.test:" + std::to_string(impostor.port()) + "/bytes/3";
  auto rule = [&](const std::string& ca) {
    return "    - host: api.example.test\n      ports: [" + std::to_string(impostor.port()) +
           "]\n      tls: terminate\n      upstream_ca: " + ca + "\n";
  };
  use_rules(rule(server_.ca_file()), "api.example.test: 127.0.0.3", "127.0.0.3/32");
  SandboxRun refused = sh("curl -sS -m 20 " + url + " -w '\\n%{http_code}\\n'");
  EXPECT_EQ(0, refused.status) << refused.err;
  EXPECT_EQ("{\"error\":\"upstream_certificate\",\"host\":\"api.example.test\","
            "\"reason\":\"unable to get local issuer certificate\"}\n502\n",
            refused.out)
      << refused.err;
  EXPECT_NE(std::string::npos, events().find("\"event\":\"net.error\"")) << events();
  EXPECT_NE(std::string::npos,
            events().find("upstream_certificate: the certificate of api.example.test was refused: unable to get "
                          "local issuer certificate"))
      << events();
  EXPECT_TRUE(impostor.request_heads().empty());  // the request was never sent to it

  // The neighbour: the same server trusted through its own CA.
  use_rules(rule(impostor.ca_file()), "api.example.test: 127.0.0.3", "127.0.0.3/32");
  SandboxRun trusted = sh("curl -sS -m 20 " + url + " -o /dev/null -w '%{http_code}\\n'");
  EXPECT_EQ(0, trusted.status) << trusted.err;
  EXPECT_EQ("200\n", trusted.out) << trusted.err;
  EXPECT_EQ(1u, impostor.request_heads().size());
}

TEST_F(RelayHttpsRefusal, MalformedAndOversizedRequestsGetA4xxAndTheConnectionEnds) {
  // Raw requests inside TLS (python's ssl over a brokered socket): each prints its status line, its body and
  // whether the relay then closed the connection ("closed") or kept it for another request ("open").
  dir_.write("raw.py", R"(import socket, ssl, sys
context = ssl.create_default_context()
def exchange(request):
    s = context.wrap_socket(socket.create_connection(("api.example.test", )" + port_ + R"(), timeout=20),
                            server_hostname="api.example.test")
    s.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
    while len(body) < length:
        body += s.recv(65536)
    s.settimeout(2)
    try:
        state = "closed" if s.recv(1) == b"" else "more bytes"
    except socket.timeout:
        state = "open"
    shown = body.decode() if not head.startswith(b"HTTP/1.1 200") else str(len(body))
    print(head.split(b"\r\n")[0].decode(), shown, state)
host = b"Host: api.example.test:)" + port_ + R"(\r\n"
exchange(b"GET /bytes/5 HTTP/1.1\r\n" + host + b"\r\n")
exchange(b"GET /bytes/5 HTTP/1.1 extra\r\n" + host + b"\r\n")
exchange(b"GET /bytes/5 HTTP/1.1\r\n" + host + b"X-Big: " + b"a" * 70000 + b"\r\n\r\n")
exchange(b"GET /bytes/5 HTTP/1.1\r\n" + host + b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc")
exchange(b"GET /bytes/5 HTTP/1.0\r\n" + host + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
exchange(b"GET /bytes/5 HTTP/1.1\r\n" + host + b"X-Evil: a\x0bb\r\n\r\n")
)");
  SandboxRun r = sh("python3 raw.py");
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("HTTP/1.1 200 OK 5 open\n"
            "HTTP/1.1 400 Bad Request {\"error\":\"bad_request\",\"host\":\"api.example.test\","
            "\"reason\":\"request line is not `METHOD target HTTP/1.x`\"} closed\n"
            "HTTP/1.1 431 Request Header Fields Too Large {\"error\":\"bad_request\",\"host\":\"api.example.test\","
            "\"reason\":\"request head larger than 65536 bytes\"} closed\n"
            // Framing a server could read otherwise than the relay (request smuggling), and a control character.
            "HTTP/1.1 400 Bad Request {\"error\":\"bad_request\",\"host\":\"api.example.test\","
            "\"reason\":\"request framing: both Transfer-Encoding and Content-Length\"} closed\n"
            "HTTP/1.1 400 Bad Request {\"error\":\"bad_request\",\"host\":\"api.example.test\","
            "\"reason\":\"request framing: Transfer-Encoding in an HTTP/1.0 request\"} closed\n"
            "HTTP/1.1 400 Bad Request {\"error\":\"bad_request\",\"host\":\"api.example.test\","
            "\"reason\":\"control character in the value of header `X-Evil`\"} closed\n",
            r.out)
      << r.err;
  EXPECT_EQ(1u, heads_received());  // only the well-formed request reached the server
}

}  // namespace
}  // namespace oishell::test
