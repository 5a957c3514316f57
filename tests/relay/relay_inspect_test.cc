// The first-bytes checks of tunnels (CONNECT, SOCKS5) under inspected rules, against upstream servers on
// 127.0.0.x: a plain-HTTP request must name the tunnel's host, a ClientHello must carry its name, anything else is
// closed before a byte reaches the server; `inspect: false` passes everything.
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "tests/relay/test_util.h"
#include "tests/relay/tls_hello.h"

namespace oishell::relay::testing {
namespace {

class RelayInspectTest : public ::testing::Test {
 protected:
  Server http_{Server::Kind::http, "127.0.0.2"};
  Server echo_{Server::Kind::echo, "127.0.0.3"};

  NetworkSpec spec() {
    NetworkSpec s;
    // allowed.example: the HTTP server, inspected; open.example: the same server, `inspect: false`;
    // echo.example / raw.example: the echo server, inspected / not; 127.0.0.3 and 127.0.0.2: IP rules, inspected.
    s.allow = {rule("allowed.example"), uninspected("open.example"), rule("echo.example"),
               uninspected("raw.example"), rule("127.0.0.3"), rule("127.0.0.2")};
    s.hosts["allowed.example"] = "127.0.0.2";
    s.hosts["open.example"] = "127.0.0.2";
    s.hosts["echo.example"] = "127.0.0.3";
    s.hosts["raw.example"] = "127.0.0.3";
    s.allow_private = {cidr("127.0.0.0/8")};
    return s;
  }
  std::string hp() const { return std::to_string(http_.port()); }
  std::string ep() const { return std::to_string(echo_.port()); }

  UniqueFd tunnel(RelayUnderTest& relay, const std::string& authority) {
    std::string refusal;
    UniqueFd fd = http_connect("127.0.0.1", relay.http_port, authority, &refusal);
    EXPECT_TRUE(fd.valid()) << authority << ": " << refusal;
    return fd;
  }
};

std::string get(const std::string& host_header, const std::string& path = "/host", const char* version = "HTTP/1.1") {
  return "GET " + path + " " + version + "\r\nHost: " + host_header + "\r\nConnection: close\r\n\r\n";
}

// The one net.denied event of `host` (waiting for it), checked for the tunnel's fields.
nlohmann::json denied_event(RelayUnderTest& relay, const std::string& host, uint16_t port,
                            const std::string& protocol = "http-connect") {
  auto e = relay.events.wait_for("net.denied", host);
  EXPECT_TRUE(e.has_value()) << "no net.denied for " << host;
  if (!e) return {};
  EXPECT_EQ(port, (*e)["port"].get<uint16_t>());
  EXPECT_EQ(protocol, (*e)["protocol"]);
  return *e;
}

TEST_F(RelayInspectTest, PlainHttpInATunnelMustNameTheHost) {
  RelayUnderTest relay(spec());
  // The neighbour: Host names the tunnel's host (with its port, and without one).
  for (std::string host : {"allowed.example:" + hp(), std::string("Allowed.Example")}) {
    UniqueFd fd = tunnel(relay, "allowed.example:" + hp());
    send_all(fd.get(), get(host));
    std::string response = read_all(fd.get());
    EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response;
    EXPECT_TRUE(response.ends_with("GET /host HTTP/1.1\nHost: " + host + "\nProxy-Connection: absent\n")) << response;
  }
  uint64_t served = http_.bytes_received();

  // Another virtual host of the same server: closed before a byte is forwarded (without the check, the server
  // would answer for other.example).
  UniqueFd fd = tunnel(relay, "allowed.example:" + hp());
  send_all(fd.get(), get("other.example"));
  EXPECT_EQ("", read_all(fd.get()));
  EXPECT_EQ(served, http_.bytes_received());
  auto e = denied_event(relay, "allowed.example", http_.port());
  EXPECT_EQ("inspection: HTTP Host mismatch", e["rule"]);
  EXPECT_EQ("HTTP Host `other.example` does not match the requested host allowed.example:" + hp(), e["reason"]);
}

TEST_F(RelayInspectTest, HostWithAnotherPortOrNoHostIsClosed) {
  RelayUnderTest relay(spec());
  UniqueFd wrong_port = tunnel(relay, "allowed.example:" + hp());
  send_all(wrong_port.get(), get("allowed.example:1"));
  EXPECT_EQ("", read_all(wrong_port.get()));
  UniqueFd no_host = tunnel(relay, "allowed.example:" + hp());
  send_all(no_host.get(), "GET /host HTTP/1.0\r\n\r\n");
  EXPECT_EQ("", read_all(no_host.get()));
  EXPECT_EQ(0u, http_.bytes_received());
  std::vector<std::string> rules;
  for (const auto& e : relay.events.all()) {
    if (e["event"] == "net.denied") rules.push_back(e["rule"]);
  }
  EXPECT_EQ((std::vector<std::string>{"inspection: HTTP Host mismatch", "inspection: HTTP Host header"}), rules);
}

TEST_F(RelayInspectTest, EveryRequestOfAKeptAliveTunnelIsChecked) {
  RelayUnderTest relay(spec());
  UniqueFd fd = tunnel(relay, "allowed.example:" + hp());
  // A request with a body (skipped by its length), then a matching one, on one connection.
  std::string first = "POST /echo HTTP/1.1\r\nHost: allowed.example\r\nContent-Length: 21\r\n\r\nHost: other.example\r\n";
  send_all(fd.get(), first);
  EXPECT_EQ("HTTP/1.1 200 OK\r\nContent-Length: 21\r\n\r\n", read_head(fd.get()));
  EXPECT_EQ("Host: other.example\r\n", read_exact(fd.get(), 21));  // a body is not a header
  std::string second = "GET /bytes/3 HTTP/1.1\r\nhost: allowed.example:" + hp() + "\r\n\r\n";
  send_all(fd.get(), second);
  EXPECT_EQ("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", read_head(fd.get()));
  EXPECT_EQ(3u, read_exact(fd.get(), 3).size());
  EXPECT_EQ(first.size() + second.size(), http_.bytes_received());
  // The third asks for another site on the same connection: closed, and it never reaches the server.
  send_all(fd.get(), "GET /host HTTP/1.1\r\nHost: other.example\r\n\r\n");
  EXPECT_EQ("", read_all(fd.get()));
  EXPECT_EQ(first.size() + second.size(), http_.bytes_received());
  EXPECT_EQ("inspection: HTTP Host mismatch", denied_event(relay, "allowed.example", http_.port())["rule"]);
}

TEST_F(RelayInspectTest, ClientHelloWithoutServerNameIsClosed) {
  RelayUnderTest relay(spec());
  UniqueFd named = tunnel(relay, "echo.example:" + ep());
  std::string hello = tls_client_hello("echo.example");
  send_all(named.get(), hello);
  EXPECT_EQ(hello, read_exact(named.get(), hello.size()));  // the neighbour: the name matches, forwarded
  uint64_t before = echo_.bytes_received();

  UniqueFd fd = tunnel(relay, "echo.example:" + ep());
  send_all(fd.get(), tls_client_hello(""));
  EXPECT_EQ("", read_all(fd.get()));
  EXPECT_EQ(before, echo_.bytes_received());
  auto e = denied_event(relay, "echo.example", echo_.port());
  EXPECT_EQ("inspection: TLS without server name", e["rule"]);
  EXPECT_NE(std::string::npos, e["reason"].get<std::string>().find("without a server name (SNI)")) << e;
}

TEST_F(RelayInspectTest, OtherProtocolsAreClosedAtTheirFirstLine) {
  RelayUnderTest relay(spec());
  // An ssh greeting is refused as soon as it cannot be a request line, before the client waits for the server.
  UniqueFd ssh = tunnel(relay, "echo.example:" + ep());
  send_all(ssh.get(), "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n");
  EXPECT_EQ("", read_all(ssh.get()));
  auto e = denied_event(relay, "echo.example", echo_.port());
  EXPECT_EQ("inspection: not TLS or HTTP", e["rule"]);
  EXPECT_EQ("`SSH-2.0-OpenSSH_9.2p1 Debian-2` is not an HTTP/1.x request line: request line is not `METHOD target "
            "HTTP/1.x`",
            e["reason"]);
  // Binary garbage: refused at its first byte.
  UniqueFd garbage = tunnel(relay, "echo.example:" + ep());
  send_all(garbage.get(), std::string("\x00\x01\x02", 3));
  EXPECT_EQ("", read_all(garbage.get()));
  // HTTP/2 with prior knowledge is not HTTP/1.x either.
  UniqueFd h2 = tunnel(relay, "echo.example:" + ep());
  send_all(h2.get(), "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  EXPECT_EQ("", read_all(h2.get()));
  EXPECT_EQ(0u, echo_.bytes_received());
  int denials = 0;
  for (const auto& ev : relay.events.all()) denials += ev["event"] == "net.denied" ? 1 : 0;
  EXPECT_EQ(3, denials);
}

TEST_F(RelayInspectTest, UninspectedRulePassesAnything) {
  RelayUnderTest relay(spec());
  // The same HTTP server as allowed.example, but `inspect: false`: another Host passes (the server answers it).
  UniqueFd fd = tunnel(relay, "open.example:" + hp());
  send_all(fd.get(), get("other.example"));
  std::string response = read_all(fd.get());
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response;
  EXPECT_TRUE(response.ends_with("\nHost: other.example\nProxy-Connection: absent\n")) << response;
  // A ClientHello without a name and an ssh greeting pass to the echo server, byte for byte.
  std::string hello = tls_client_hello("");
  UniqueFd raw = tunnel(relay, "raw.example:" + ep());
  send_all(raw.get(), hello);
  EXPECT_EQ(hello, read_exact(raw.get(), hello.size()));
  int code = -1;
  UniqueFd socks = socks_connect(relay.socks_port, "raw.example", echo_.port(), &code);
  ASSERT_TRUE(socks.valid()) << code;
  send_all(socks.get(), "SSH-2.0-x\r\n");
  EXPECT_EQ("SSH-2.0-x\r\n", read_exact(socks.get(), 11));
  for (const auto& ev : relay.events.all()) EXPECT_NE("net.denied", ev["event"]) << ev;
}

TEST_F(RelayInspectTest, Socks5TunnelsAreCheckedToo) {
  RelayUnderTest relay(spec());
  int code = -1;
  UniqueFd ok = socks_connect(relay.socks_port, "allowed.example", http_.port(), &code);
  ASSERT_TRUE(ok.valid()) << code;
  send_all(ok.get(), get("allowed.example"));
  EXPECT_TRUE(read_all(ok.get()).starts_with("HTTP/1.1 200 OK\r\n"));
  uint64_t served = http_.bytes_received();
  UniqueFd fd = socks_connect(relay.socks_port, "allowed.example", http_.port(), &code);
  ASSERT_TRUE(fd.valid()) << code;
  send_all(fd.get(), get("other.example"));
  EXPECT_EQ("", read_all(fd.get()));
  EXPECT_EQ(served, http_.bytes_received());
  EXPECT_EQ("inspection: HTTP Host mismatch", denied_event(relay, "allowed.example", http_.port(), "socks5")["rule"]);
}

TEST_F(RelayInspectTest, IpDestinationHasNoNameToCompare) {
  RelayUnderTest relay(spec());
  // TLS to an address: a ClientHello without a name passes; one naming a site is refused (it would pick a site
  // on a shared address that no rule names).
  std::string hello = tls_client_hello("");
  UniqueFd plain = tunnel(relay, "127.0.0.3:" + ep());
  send_all(plain.get(), hello);
  EXPECT_EQ(hello, read_exact(plain.get(), hello.size()));
  uint64_t before = echo_.bytes_received();
  UniqueFd named = tunnel(relay, "127.0.0.3:" + ep());
  send_all(named.get(), tls_client_hello("echo.example"));
  EXPECT_EQ("", read_all(named.get()));
  EXPECT_EQ(before, echo_.bytes_received());
  auto e = denied_event(relay, "127.0.0.3", echo_.port());
  EXPECT_EQ("inspection: TLS server name on an IP destination", e["rule"]);
  // HTTP to an address: the Host must be that address.
  UniqueFd http = tunnel(relay, "127.0.0.2:" + hp());
  send_all(http.get(), get("127.0.0.2:" + hp()));
  EXPECT_TRUE(read_all(http.get()).starts_with("HTTP/1.1 200 OK\r\n"));
  UniqueFd other = tunnel(relay, "127.0.0.2:" + hp());
  send_all(other.get(), get("allowed.example"));
  EXPECT_EQ("", read_all(other.get()));
  EXPECT_EQ("inspection: HTTP Host mismatch", denied_event(relay, "127.0.0.2", http_.port())["rule"]);
}

TEST_F(RelayInspectTest, UpgradeToWebSocketEndsTheChecksAndH2cIsRefused) {
  RelayUnderTest relay(spec());
  std::string upgrade = "GET /chat HTTP/1.1\r\nHost: echo.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
  std::string frame("\x81\x05hello", 7);
  UniqueFd ws = tunnel(relay, "echo.example:" + ep());
  send_all(ws.get(), upgrade + frame);
  EXPECT_EQ(upgrade + frame, read_exact(ws.get(), upgrade.size() + frame.size()));
  UniqueFd h2c = tunnel(relay, "echo.example:" + ep());
  send_all(h2c.get(), "GET / HTTP/1.1\r\nHost: echo.example\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n");
  EXPECT_EQ("", read_all(h2c.get()));
  EXPECT_EQ("inspection: HTTP/2 upgrade", denied_event(relay, "echo.example", echo_.port())["rule"]);
}

TEST_F(RelayInspectTest, RequestsThatPointElsewhereAreClosed) {
  RelayUnderTest relay(spec());
  struct Case {
    std::string request;
    std::string rule;
  } cases[] = {
      // The server might be a proxy: an absolute-form target for another host, or a CONNECT, would go elsewhere.
      {"GET http://other.example/ HTTP/1.1\r\nHost: echo.example\r\n\r\n", "inspection: HTTP request target mismatch"},
      {"CONNECT other.example:443 HTTP/1.1\r\nHost: echo.example\r\n\r\n", "inspection: CONNECT in a tunnel"},
      {"GET / HTTP/1.1\r\nHost: echo.example\r\nHost: other.example\r\n\r\n", "inspection: HTTP Host header"},
      {"POST / HTTP/1.0\r\nHost: echo.example\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       "inspection: malformed HTTP request"},
      {"GET / HTTP/1.1\r\nHost: echo.example\r\nX-A: a\x01" "b\r\n\r\n", "inspection: malformed HTTP request"},
  };
  for (const auto& c : cases) {
    UniqueFd fd = tunnel(relay, "echo.example:" + ep());
    send_all(fd.get(), c.request);
    EXPECT_EQ("", read_all(fd.get())) << c.request;
  }
  EXPECT_EQ(0u, echo_.bytes_received());
  std::vector<std::string> rules;
  for (const auto& e : relay.events.all()) {
    if (e["event"] == "net.denied") rules.push_back(e["rule"]);
  }
  ASSERT_EQ(5u, rules.size());
  for (size_t i = 0; i < rules.size(); ++i) EXPECT_EQ(cases[i].rule, rules[i]);
  // The absolute-form in the same host is fine.
  UniqueFd ok = tunnel(relay, "allowed.example:" + hp());
  send_all(ok.get(), "GET http://allowed.example:" + hp() + "/host HTTP/1.1\r\nHost: allowed.example\r\n"
                     "Connection: close\r\n\r\n");
  EXPECT_TRUE(read_all(ok.get()).starts_with("HTTP/1.1 200 OK\r\n"));
}

}  // namespace
}  // namespace oishell::relay::testing
