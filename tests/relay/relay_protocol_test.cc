// The relay's decisions through each protocol, against upstream servers on 127.0.0.x (names pinned with hosts:).
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "tests/relay/test_util.h"
#include "tests/relay/tls_hello.h"

namespace oishell::relay::testing {
namespace {

class RelayProtocolTest : public ::testing::Test {
 protected:
  Server http_{Server::Kind::http, "127.0.0.2"};
  Server echo_{Server::Kind::echo, "127.0.0.3"};
  Server second_{Server::Kind::http, "127.0.0.4"};

  NetworkSpec base_spec() {
    NetworkSpec s;
    s.allow = {rule("allowed.example"), rule("*.wild.example"), rule("echo.example"), rule("second.example"),
               rule("ported.example:" + std::to_string(http_.port())), uninspected("raw.example")};
    s.deny = {rule("blocked.wild.example")};
    for (const char* name : {"allowed.example", "wild.example", "a.wild.example", "blocked.wild.example",
                             "ported.example"}) {
      s.hosts[name] = "127.0.0.2";
    }
    s.hosts["echo.example"] = "127.0.0.3";
    s.hosts["raw.example"] = "127.0.0.3";  // the echo server, for bytes that are neither TLS nor HTTP
    s.hosts["second.example"] = "127.0.0.4";
    s.allow_private = {cidr("127.0.0.0/8")};
    return s;
  }
  std::string hp() const { return std::to_string(http_.port()); }
  std::string ep() const { return std::to_string(echo_.port()); }
};

std::string get_through_tunnel(int fd, const std::string& host, const std::string& path) {
  send_all(fd, "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
  return read_all(fd);
}

TEST_F(RelayProtocolTest, ConnectToAllowedHostWorksAndIsAudited) {
  RelayUnderTest relay(base_spec());
  std::string refusal;
  UniqueFd fd = http_connect("127.0.0.1", relay.http_port, "allowed.example:" + hp(), &refusal);
  ASSERT_TRUE(fd.valid()) << refusal;
  std::string response = get_through_tunnel(fd.get(), "allowed.example", "/bytes/1000");
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK")) << response.substr(0, 100);
  EXPECT_EQ(1000u, response.size() - response.find("\r\n\r\n") - 4);
  fd.reset();
  auto allowed = relay.events.wait_for("net.allowed", "allowed.example");
  ASSERT_TRUE(allowed.has_value());
  EXPECT_EQ("allow allowed.example", (*allowed)["rule"]);
  EXPECT_EQ("127.0.0.2", (*allowed)["address"]);
  auto closed = relay.events.wait_for("net.closed", "allowed.example");
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(response.size(), (*closed)["bytes_down"].get<uint64_t>());
  EXPECT_GT((*closed)["bytes_up"].get<uint64_t>(), 0u);
}

TEST_F(RelayProtocolTest, AbsoluteFormIsForwardedInOriginForm) {
  RelayUnderTest relay(base_spec());
  UniqueFd fd = connect_to("127.0.0.1", relay.http_port);
  std::string authority = "allowed.example:" + hp();
  send_all(fd.get(), "GET http://" + authority + "/host HTTP/1.1\r\nHost: " + authority +
                         "\r\nProxy-Connection: keep-alive\r\nConnection: close\r\n\r\n");
  std::string response = read_all(fd.get());
  EXPECT_NE(std::string::npos, response.find("GET /host HTTP/1.1\nHost: " + authority + "\nProxy-Connection: absent"))
      << response;
}

TEST_F(RelayProtocolTest, KeepAlivePipeliningAndOriginSwitch) {
  RelayUnderTest relay(base_spec());
  UniqueFd fd = connect_to("127.0.0.1", relay.http_port);
  std::string a = "allowed.example:" + hp();
  std::string b = "second.example:" + std::to_string(second_.port());
  // Two pipelined requests to one origin, then one to another origin on the same client connection.
  send_all(fd.get(), "GET http://" + a + "/bytes/10 HTTP/1.1\r\nHost: " + a + "\r\n\r\nGET http://" + a +
                         "/bytes/20 HTTP/1.1\r\nHost: " + a + "\r\n\r\n");
  send_all(fd.get(), "GET http://" + b + "/bytes/30 HTTP/1.1\r\nHost: " + b + "\r\nConnection: close\r\n\r\n");
  std::string all = read_all(fd.get());
  size_t pos = 0;
  for (size_t expected : {10u, 20u, 30u}) {
    std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(expected) + "\r\n\r\n";
    ASSERT_EQ(0, all.compare(pos, head.size(), head)) << all;
    pos += head.size() + expected;
  }
  EXPECT_EQ(all.size(), pos);
  EXPECT_EQ(1, http_.accepted());
  EXPECT_EQ(1, second_.accepted());
}

TEST_F(RelayProtocolTest, ChunkedRequestBodyPassesThrough) {
  RelayUnderTest relay(base_spec());
  UniqueFd fd = connect_to("127.0.0.1", relay.http_port);
  std::string a = "allowed.example:" + hp();
  std::string body = "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n";
  send_all(fd.get(), "POST http://" + a + "/echo HTTP/1.1\r\nHost: " + a +
                         "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + body);
  std::string response = read_all(fd.get());
  EXPECT_TRUE(response.ends_with("\r\n\r\n" + body)) << response;
}

TEST_F(RelayProtocolTest, Socks5WithDomainName) {
  RelayUnderTest relay(base_spec());
  int code = -9;
  UniqueFd fd = socks_connect(relay.socks_port, "Allowed.Example.", http_.port(), &code);
  ASSERT_TRUE(fd.valid()) << "reply " << code;
  std::string response = get_through_tunnel(fd.get(), "allowed.example", "/bytes/5");
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK"));
}

TEST_F(RelayProtocolTest, Socks5IpLiteralNeedsAnIpRule) {
  NetworkSpec spec = base_spec();
  {
    RelayUnderTest relay(spec);
    int code = -9;
    UniqueFd fd = socks_connect_ip(relay.socks_port, "127.0.0.3", echo_.port(), &code);
    EXPECT_FALSE(fd.valid());
    EXPECT_EQ(0x02, code);  // connection not allowed by ruleset (echo.example's rule does not cover the literal)
  }
  spec.allow.push_back(uninspected("127.0.0.3"));
  RelayUnderTest relay(spec);
  int code = -9;
  UniqueFd fd = socks_connect_ip(relay.socks_port, "127.0.0.3", echo_.port(), &code);
  ASSERT_TRUE(fd.valid()) << code;
  send_all(fd.get(), "ping");
  EXPECT_EQ("ping", read_exact(fd.get(), 4));
  EXPECT_EQ(0u, http_.bytes_received());
}

TEST_F(RelayProtocolTest, DeniedHostGets403NamingHostAndRule) {
  RelayUnderTest relay(base_spec());
  std::string refusal;
  UniqueFd fd = http_connect("127.0.0.1", relay.http_port, "other.example:443", &refusal);
  EXPECT_FALSE(fd.valid());
  EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403 Forbidden")) << refusal;
  EXPECT_NE(std::string::npos, refusal.find("other.example:443")) << refusal;
  EXPECT_NE(std::string::npos, refusal.find("on_unlisted: deny")) << refusal;
  auto denied = relay.events.wait_for("net.denied", "other.example");
  ASSERT_TRUE(denied.has_value());
  EXPECT_EQ(443, (*denied)["port"]);
  EXPECT_EQ("on_unlisted: deny", (*denied)["rule"]);
  int code = -9;
  EXPECT_FALSE(socks_connect(relay.socks_port, "other.example", 443, &code).valid());
  EXPECT_EQ(0x02, code);
}

TEST_F(RelayProtocolTest, WildcardCoversSubdomainNotApexAndDenyWins) {
  RelayUnderTest relay(base_spec());
  std::string refusal;
  EXPECT_TRUE(http_connect("127.0.0.1", relay.http_port, "a.wild.example:" + hp(), &refusal).valid()) << refusal;
  refusal.clear();
  EXPECT_FALSE(http_connect("127.0.0.1", relay.http_port, "wild.example:" + hp(), &refusal).valid());
  EXPECT_NE(std::string::npos, refusal.find("on_unlisted: deny")) << refusal;
  refusal.clear();
  EXPECT_FALSE(http_connect("127.0.0.1", relay.http_port, "blocked.wild.example:" + hp(), &refusal).valid());
  EXPECT_NE(std::string::npos, refusal.find("deny blocked.wild.example")) << refusal;
}

TEST_F(RelayProtocolTest, WrongPortIsDenied) {
  RelayUnderTest relay(base_spec());
  std::string refusal;
  EXPECT_TRUE(http_connect("127.0.0.1", relay.http_port, "ported.example:" + hp(), &refusal).valid()) << refusal;
  EXPECT_FALSE(http_connect("127.0.0.1", relay.http_port, "ported.example:" + ep(), &refusal).valid());
  EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403")) << refusal;
  EXPECT_EQ(0, echo_.accepted());
}

TEST_F(RelayProtocolTest, IpLiteralNotInPolicyIsDenied) {
  RelayUnderTest relay(base_spec());
  std::string refusal;
  // 127.0.0.2 is allowed.example's address and inside allow_private, but a literal only matches IP rules.
  EXPECT_FALSE(http_connect("127.0.0.1", relay.http_port, "127.0.0.2:" + hp(), &refusal).valid());
  EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403")) << refusal;
  EXPECT_EQ(0, http_.accepted());
}

TEST_F(RelayProtocolTest, NameResolvingToPrivateAddressIsDeniedWithoutAllowPrivate) {
  NetworkSpec spec = base_spec();
  spec.allow_private.clear();
  spec.allow.push_back(rule("private.example"));
  spec.hosts["private.example"] = "10.0.0.1";
  RelayUnderTest relay(spec);
  std::string refusal;
  EXPECT_FALSE(http_connect("127.0.0.1", relay.http_port, "allowed.example:" + hp(), &refusal).valid());
  EXPECT_NE(std::string::npos, refusal.find("loopback")) << refusal;
  EXPECT_NE(std::string::npos, refusal.find("private-address guard")) << refusal;
  EXPECT_FALSE(http_connect("127.0.0.1", relay.http_port, "private.example:80", &refusal).valid());
  EXPECT_NE(std::string::npos, refusal.find("RFC 1918")) << refusal;
  EXPECT_EQ(0, http_.accepted());
}

TEST_F(RelayProtocolTest, ResolvesLocalhostToTheLoopbackAndGuardsTheResult) {
  // `localhost` is not pinned: the resolver answers it with the loopback itself (RFC 6761), with or without an
  // /etc/hosts (a fresh root file system had none, and c-ares 1.18 then asked the name server), and the guard
  // refuses the loopback until allow_private names it.
  Server local(Server::Kind::echo, "127.0.0.1");
  NetworkSpec spec;
  spec.allow = {uninspected("localhost")};
  {
    RelayUnderTest relay(spec);
    std::string refusal;
    EXPECT_FALSE(http_connect("127.0.0.1", relay.http_port, "localhost:" + std::to_string(local.port()), &refusal)
                     .valid());
    EXPECT_NE(std::string::npos, refusal.find("loopback")) << refusal;
    EXPECT_EQ(0, local.accepted());
  }
  spec.allow_private = {cidr("127.0.0.0/8"), cidr("::1/128")};
  RelayUnderTest relay(spec);
  std::string refusal;
  UniqueFd fd = http_connect("127.0.0.1", relay.http_port, "localhost:" + std::to_string(local.port()), &refusal);
  ASSERT_TRUE(fd.valid()) << refusal;
  send_all(fd.get(), "hello");
  EXPECT_EQ("hello", read_exact(fd.get(), 5));
}

TEST_F(RelayProtocolTest, SsrfToLoopbackDeniedEvenWithAllowAll) {
  NetworkSpec spec;
  spec.allow_all = true;
  RelayUnderTest relay(spec);
  for (std::string target : {"127.0.0.1:" + std::to_string(relay.http_port), "[::1]:" + hp(),
                             "[::ffff:127.0.0.1]:" + hp(), "127.0.0.2:" + hp()}) {
    std::string refusal;
    EXPECT_FALSE(http_connect("127.0.0.1", relay.http_port, target, &refusal).valid()) << target;
    EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403")) << target << ": " << refusal;
    EXPECT_NE(std::string::npos, refusal.find("private-address guard")) << refusal;
  }
  EXPECT_EQ(0, http_.accepted());
}

TEST_F(RelayProtocolTest, TlsServerNameMustMatchConnectHost) {
  RelayUnderTest relay(base_spec());
  std::string refusal;
  UniqueFd fd = http_connect("127.0.0.1", relay.http_port, "echo.example:" + ep(), &refusal);
  ASSERT_TRUE(fd.valid()) << refusal;
  std::string hello = tls_client_hello("ECHO.example");
  send_all(fd.get(), hello);
  EXPECT_EQ(hello, read_exact(fd.get(), hello.size()));  // matching name: forwarded (and echoed)

  UniqueFd fronted = http_connect("127.0.0.1", relay.http_port, "echo.example:" + ep(), &refusal);
  ASSERT_TRUE(fronted.valid()) << refusal;
  uint64_t before = echo_.bytes_received();
  send_all(fronted.get(), tls_client_hello("evil.example", /*split_records=*/true));
  EXPECT_EQ("", read_all(fronted.get()));  // closed without forwarding a byte
  EXPECT_EQ(before, echo_.bytes_received());
  auto denied = relay.events.wait_for("net.denied", "echo.example");
  ASSERT_TRUE(denied.has_value());
  EXPECT_EQ("inspection: TLS server name mismatch", (*denied)["rule"]);
  EXPECT_NE(std::string::npos, (*denied)["reason"].get<std::string>().find("evil.example"));
}

TEST_F(RelayProtocolTest, HostHeaderMustMatchTarget) {
  RelayUnderTest relay(base_spec());
  UniqueFd fd = connect_to("127.0.0.1", relay.http_port);
  send_all(fd.get(), "GET http://allowed.example:" + hp() + "/host HTTP/1.1\r\nHost: second.example\r\n\r\n");
  std::string response = read_all(fd.get());
  EXPECT_TRUE(response.starts_with("HTTP/1.1 403")) << response;
  EXPECT_NE(std::string::npos, response.find("host-header check")) << response;
  EXPECT_EQ(0, http_.accepted());
  EXPECT_EQ(0, second_.accepted());
}

TEST_F(RelayProtocolTest, Ipv6ListenerAndUpstream) {
  Server v6(Server::Kind::echo, "::1");
  NetworkSpec spec = base_spec();
  spec.allow.push_back(uninspected("v6.example"));
  spec.hosts["v6.example"] = "::1";
  spec.allow_private.push_back(cidr("::1/128"));
  RelayUnderTest relay(spec);
  std::string refusal;
  UniqueFd fd = http_connect("::1", relay.http6_port, "v6.example:" + std::to_string(v6.port()), &refusal);
  ASSERT_TRUE(fd.valid()) << refusal;
  send_all(fd.get(), "six");
  EXPECT_EQ("six", read_exact(fd.get(), 3));
  // Without the ::1 exemption the same connection is refused.
  spec.allow_private = {cidr("127.0.0.0/8")};
  RelayUnderTest strict(spec);
  EXPECT_FALSE(http_connect("::1", strict.http6_port, "v6.example:" + std::to_string(v6.port()), &refusal).valid());
  EXPECT_NE(std::string::npos, refusal.find("loopback (::1)")) << refusal;
}

TEST_F(RelayProtocolTest, HalfCloseDeliversEverythingBothWays) {
  RelayUnderTest relay(base_spec());
  std::string payload(8 * 1024 * 1024, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(body_byte(i));
  for (bool socks : {false, true}) {
    int code = 0;
    std::string refusal;
    UniqueFd fd = socks ? socks_connect(relay.socks_port, "raw.example", echo_.port(), &code)
                        : http_connect("127.0.0.1", relay.http_port, "raw.example:" + ep(), &refusal);
    ASSERT_TRUE(fd.valid()) << refusal << code;
    std::string echoed;
    std::thread reader([&] { echoed = read_all(fd.get()); });
    ASSERT_TRUE(send_all(fd.get(), payload));
    shutdown(fd.get(), SHUT_WR);  // the echo server sees EOF only after every byte, then closes its side
    reader.join();
    EXPECT_EQ(payload.size(), echoed.size());
    EXPECT_TRUE(payload == echoed) << (socks ? "socks5" : "connect");
  }
}

}  // namespace
}  // namespace oishell::relay::testing
