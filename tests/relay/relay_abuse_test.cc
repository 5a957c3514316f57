// Malformed and hostile clients, limits, and load: the relay answers clearly, survives, and keeps serving others.
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "tests/relay/test_util.h"

namespace oishell::relay::testing {
namespace {

class RelayAbuseTest : public ::testing::Test {
 protected:
  Server http_{Server::Kind::http, "127.0.0.2"};
  Server echo_{Server::Kind::echo, "127.0.0.3"};
  NetworkSpec spec() {
    NetworkSpec s;
    s.allow = {rule("allowed.example"), uninspected("echo.example")};  // raw bytes through the echo server
    s.hosts["allowed.example"] = "127.0.0.2";
    s.hosts["echo.example"] = "127.0.0.3";
    s.allow_private = {cidr("127.0.0.0/8")};
    return s;
  }
  std::string authority() const { return "allowed.example:" + std::to_string(http_.port()); }

  // Sends `request` on a new connection to the HTTP listener; returns everything answered before the close.
  static std::string exchange(uint16_t port, std::string_view request) {
    UniqueFd fd = connect_to("127.0.0.1", port);
    send_all(fd.get(), request);
    return read_all(fd.get());
  }
  void expect_still_serving(const RelayUnderTest& relay) {
    std::string refusal;
    UniqueFd fd = http_connect("127.0.0.1", relay.http_port, "echo.example:" + std::to_string(echo_.port()), &refusal);
    ASSERT_TRUE(fd.valid()) << refusal;
    send_all(fd.get(), "ok?");
    EXPECT_EQ("ok?", read_exact(fd.get(), 3));
  }
};

TEST_F(RelayAbuseTest, MalformedHttpGetsClearErrors) {
  RelayUnderTest relay(spec());
  struct Case {
    std::string request;
    std::string status;
    std::string words;
  } cases[] = {
      {std::string("\x16\x03\x01\x00\x05hello\r\n\r\n", 14), "400", "NUL"},
      {"\x16\x03\x01 garbage\r\n\r\n", "400", "request line"},
      {"GET http://" + authority() + "/ HTTP/1.1\nHost: x\n\n", "400", "bare LF"},
      {"GET / HTTP/1.1\r\nHost: allowed.example\r\n\r\n", "400", "absolute-form"},
      {"GET https://" + authority() + "/ HTTP/1.1\r\nHost: " + authority() + "\r\n\r\n", "400", "CONNECT"},
      {"GET http://" + authority() + "/ HTTP/2.0\r\nHost: " + authority() + "\r\n\r\n", "400", "version"},
      {"POST http://" + authority() + "/echo HTTP/1.1\r\nHost: " + authority() +
           "\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
       "400", "both Transfer-Encoding and Content-Length"},
      {"GET http://" + authority() + "/ HTTP/1.1\r\nHost: " + authority() + "\r\n folded\r\n\r\n", "400", "folding"},
      {"GET http://" + authority() + "/ HTTP/1.1\r\n\r\n", "400", "without a Host"},
      {"CONNECT allowed.example HTTP/1.1\r\n\r\n", "400", "no port"},
      {"CONNECT bad_host!:443 HTTP/1.1\r\n\r\n", "400", "bad host"},
      {"GET http://" + authority() + "/ HTTP/1.1\r\nHost: " + authority() + "\r\nX: " + std::string(70000, 'a'),
       "431", "larger than"},
  };
  for (const Case& c : cases) {
    std::string response = exchange(relay.http_port, c.request);
    EXPECT_TRUE(response.starts_with("HTTP/1.1 " + c.status)) << c.request.substr(0, 60) << " -> " << response;
    EXPECT_NE(std::string::npos, response.find(c.words)) << response;
  }
  EXPECT_EQ(0, http_.accepted());
  expect_still_serving(relay);
}

// RFC 9112 6.1 (no transfer codings in HTTP/1.0) and RFC 9110 5.5 (no control characters but HTAB in a field
// value): 400, and nothing reaches the server.
TEST_F(RelayAbuseTest, Http10WithTransferEncodingAndControlCharactersGet400) {
  RelayUnderTest relay(spec());
  std::string authority = this->authority();
  std::string hp = std::to_string(http_.port());
  struct Case {
    std::string request;
    std::string words;
  } cases[] = {
      {"POST http://" + authority + "/echo HTTP/1.0\r\nHost: " + authority +
           "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
       "Transfer-Encoding in an HTTP/1.0 request"},
      {"POST http://" + authority + "/echo HTTP/1.0\r\nHost: " + authority +
           "\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\nabc",
       "Transfer-Encoding in an HTTP/1.0 request"},
      {"GET http://" + authority + "/ HTTP/1.1\r\nHost: " + authority + "\r\nX-Evil: a\x0b" "b\r\n\r\n",
       "control character in the value of header `X-Evil`"},
      {"GET http://" + authority + "/ HTTP/1.1\r\nHost: " + authority + "\r\nX-Evil: a\x7f\r\n\r\n",
       "control character in the value of header `X-Evil`"},
      {"GET http://" + authority + "/ HTTP/1.1\r\nHost: allowed.example\x01:" + hp + "\r\n\r\n",
       "control character in the value of header `Host`"},
  };
  for (const auto& c : cases) {
    UniqueFd fd = connect_to("127.0.0.1", relay.http_port);
    send_all(fd.get(), c.request);
    std::string response = read_all(fd.get());
    EXPECT_TRUE(response.starts_with("HTTP/1.1 400 Bad Request\r\n")) << response;
    EXPECT_NE(std::string::npos, response.find(c.words)) << response;
  }
  EXPECT_EQ(0, http_.accepted());
  // The neighbours: HTTP/1.0 with a length, and a tab inside a value, are forwarded.
  UniqueFd fd = connect_to("127.0.0.1", relay.http_port);
  send_all(fd.get(), "POST http://" + authority + "/echo HTTP/1.0\r\nHost: " + authority +
                         "\r\nX-Tab: a\tb\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
  std::string response = read_all(fd.get());
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response;
  EXPECT_TRUE(response.ends_with("\r\n\r\nhello")) << response;
}

TEST_F(RelayAbuseTest, MalformedSocksGetsRefusalCodes) {
  RelayUnderTest relay(spec());
  EXPECT_EQ("", exchange(relay.socks_port, std::string("\x04\x01\x00\x50\x7f\x00\x00\x01\x00", 9)));  // SOCKS4
  EXPECT_EQ(std::string("\x05\xff", 2), exchange(relay.socks_port, std::string("\x05\x01\x02", 3)));  // auth only
  std::string bind = std::string("\x05\x01\x00", 3) + std::string("\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50", 10);
  std::string reply = exchange(relay.socks_port, bind);
  ASSERT_EQ(12u, reply.size());
  EXPECT_EQ(0x07, reply[3]);  // command not supported
  std::string bad_type = std::string("\x05\x01\x00", 3) + std::string("\x05\x01\x00\x09\x00\x50", 6);
  reply = exchange(relay.socks_port, bad_type);
  ASSERT_EQ(12u, reply.size());
  EXPECT_EQ(0x08, reply[3]);  // address type not supported
  std::string bad_name = std::string("\x05\x01\x00\x05\x01\x00\x03\x04", 8) + "a b!" + std::string("\x00\x50", 2);
  reply = exchange(relay.socks_port, bad_name);
  ASSERT_EQ(12u, reply.size());
  EXPECT_EQ(0x02, reply[3]);
  expect_still_serving(relay);
}

TEST_F(RelayAbuseTest, TruncatedAndSilentClientsDoNotStallOthers) {
  RelayOptions options;
  options.header_timeout_ms = 300;
  RelayUnderTest relay(spec(), options);
  UniqueFd silent = connect_to("127.0.0.1", relay.http_port);
  UniqueFd partial = connect_to("127.0.0.1", relay.http_port);
  send_all(partial.get(), "CONNECT allowed.exa");
  {
    UniqueFd truncated = connect_to("127.0.0.1", relay.http_port);
    send_all(truncated.get(), "GET http://allowed.example/ HTTP/1.1\r\nHo");
  }  // closed mid-head
  expect_still_serving(relay);
  std::string answer = read_all(partial.get());
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 408")) << answer;
  std::string silent_answer = read_all(silent.get());  // a client that sends nothing also times out
  EXPECT_TRUE(silent_answer.starts_with("HTTP/1.1 408")) << silent_answer;
}

TEST_F(RelayAbuseTest, ClientThatNeverReadsDoesNotStallOthers) {
  RelayUnderTest relay(spec());
  std::string refusal;
  UniqueFd hog = http_connect("127.0.0.1", relay.http_port, authority(), &refusal);
  ASSERT_TRUE(hog.valid()) << refusal;
  send_all(hog.get(), "GET /bytes/268435456 HTTP/1.1\r\nHost: allowed.example\r\n\r\n");  // 256 MiB, never read
  for (int i = 0; i < 5; ++i) {
    UniqueFd fd = http_connect("127.0.0.1", relay.http_port, authority(), &refusal);
    ASSERT_TRUE(fd.valid()) << refusal;
    send_all(fd.get(), "GET /bytes/1048576 HTTP/1.1\r\nHost: allowed.example\r\nConnection: close\r\n\r\n");
    std::string response = read_all(fd.get());
    std::string body = response.substr(response.find("\r\n\r\n") + 4);
    ASSERT_EQ(1048576u, body.size());
    for (size_t j = 0; j < body.size(); ++j) ASSERT_EQ(body_byte(j), static_cast<uint8_t>(body[j]));
  }
}

TEST_F(RelayAbuseTest, ConnectionLimitAnswers503) {
  RelayOptions options;
  options.max_connections = 4;
  RelayUnderTest relay(spec(), options);
  std::vector<UniqueFd> held;
  std::string refusal;
  for (int i = 0; i < 4; ++i) {
    held.push_back(http_connect("127.0.0.1", relay.http_port, "echo.example:" + std::to_string(echo_.port()),
                                &refusal));
    ASSERT_TRUE(held.back().valid()) << refusal;
  }
  std::string over = exchange(relay.http_port, "CONNECT echo.example:1 HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(over.starts_with("HTTP/1.1 503")) << over;
  held.clear();
  // Slots free again once the held connections are gone.
  bool served = false;
  for (int attempt = 0; attempt < 50 && !served; ++attempt) {
    UniqueFd fd = http_connect("127.0.0.1", relay.http_port, "echo.example:" + std::to_string(echo_.port()),
                               &refusal);
    served = fd.valid();
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(served) << refusal;
}

TEST_F(RelayAbuseTest, FiveHundredConcurrentConnections) {
  RelayUnderTest relay(spec());
  constexpr int kCount = 500;
  std::vector<UniqueFd> fds;
  std::string refusal;
  std::string target = "echo.example:" + std::to_string(echo_.port());
  for (int i = 0; i < kCount; ++i) {
    fds.push_back(i % 2 ? http_connect("127.0.0.1", relay.http_port, target, &refusal)
                        : socks_connect(relay.socks_port, "echo.example", echo_.port(), nullptr));
    ASSERT_TRUE(fds.back().valid()) << i << ": " << refusal;
  }
  for (int i = 0; i < kCount; ++i) ASSERT_TRUE(send_all(fds[i].get(), "message " + std::to_string(i) + ";"));
  for (int i = 0; i < kCount; ++i) {
    std::string expected = "message " + std::to_string(i) + ";";
    ASSERT_EQ(expected, read_exact(fds[i].get(), expected.size())) << i;
  }
  EXPECT_EQ(kCount, echo_.accepted());
}

}  // namespace
}  // namespace oishell::relay::testing
