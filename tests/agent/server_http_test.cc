// The server's HTTP/1.1 request parser: what it accepts, and that everything malformed or too large is refused with
// the status to answer, whatever way the bytes are cut.
#include <gtest/gtest.h>

#include "base/http/bearer_token.h"
#include "base/http/http_message.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)
namespace {

using State = HttpRequestParser::State;

HttpRequestParser parse(std::string_view text, HttpLimits limits = {}) {
  HttpRequestParser p(limits);
  p.feed(text);
  return p;
}

TEST(ServerHttp, ParsesARequestWithABody) {
  auto p = parse("POST /openai/chat/completions?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n"
                 "Content-Type:  application/json \r\nContent-Length: 7\r\n\r\n{\"a\":1}");
  ASSERT_EQ(State::complete, p.state()) << p.error().message;
  const HttpRequest& r = p.request();
  EXPECT_EQ("POST", r.method);
  EXPECT_EQ("/openai/chat/completions", r.path);
  EXPECT_EQ("x=1", r.query);
  EXPECT_EQ(1, r.minor_version);
  ASSERT_NE(nullptr, r.header("content-type"));
  EXPECT_EQ("application/json", *r.header("CONTENT-TYPE"));  // names case-insensitive, OWS trimmed
  EXPECT_EQ("{\"a\":1}", r.body);
}

TEST(ServerHttp, ByteByByteGivesTheSameRequestAndKeepsWhatFollows) {
  std::string text = "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\r\n";
  HttpRequestParser p;
  for (char c : text) {
    ASSERT_EQ(State::need_more, p.state());
    p.feed(std::string_view(&c, 1));
  }
  ASSERT_EQ(State::complete, p.state());
  EXPECT_TRUE(p.request().header_has_token("connection", "upgrade"));
  EXPECT_FALSE(p.request().header_has_token("connection", "close"));
  p.feed("\x81\x80");  // a frame sent with the handshake stays for the websocket
  EXPECT_EQ("\x81\x80", p.take_leftover());
}

TEST(ServerHttp, LeadingEmptyLinesAreIgnored) {
  EXPECT_EQ(State::complete, parse("\r\n\r\nGET /heartbeat HTTP/1.0\r\n\r\n").state());
}

struct Bad {
  const char* text;
  int status;
};

class ServerHttpBad : public ::testing::TestWithParam<Bad> {};

TEST_P(ServerHttpBad, IsRefusedWithItsStatus) {
  auto p = parse(GetParam().text);
  ASSERT_EQ(State::error, p.state()) << GetParam().text;
  EXPECT_EQ(GetParam().status, p.error().status) << p.error().message;
  EXPECT_FALSE(p.error().message.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ServerHttpBad,
    ::testing::Values(Bad{"GARBAGE\r\n\r\n", 400}, Bad{"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
                      Bad{"GET http://evil/ HTTP/1.1\r\nHost: a\r\n\r\n", 400},
                      Bad{"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505}, Bad{"GET / HTTX/1.1\r\nHost: a\r\n\r\n", 400},
                      Bad{"GET / HTTP/1.1\r\n\r\n", 400},                         // no Host
                      Bad{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},   // two
                      Bad{"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400},             // space before the colon
                      Bad{"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400},   // obs-fold
                      Bad{"GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", 400},        // bare LF
                      Bad{"GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n", 400},          // control character
                      Bad{"GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400},
                      Bad{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400},
                      Bad{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
                      Bad{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
                      Bad{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999\r\n\r\n", 413}));

TEST(ServerHttp, LimitsOnTheHeadAndTheBody) {
  HttpLimits limits;
  limits.max_head_bytes = 256;
  limits.max_headers = 4;
  limits.max_body_bytes = 10;
  // A head that never ends is refused as soon as it passes the limit, not buffered.
  HttpRequestParser endless(limits);
  endless.feed("GET / HTTP/1.1\r\nHost: a\r\nX: ");
  for (int i = 0; i < 100 && endless.state() == State::need_more; ++i) endless.feed(std::string(10, 'x'));
  EXPECT_EQ(State::error, endless.state());
  EXPECT_EQ(431, endless.error().status);
  EXPECT_EQ(431, parse("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\n\r\n", limits).error().status);
  EXPECT_EQ(State::complete, parse("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 1\r\nC: 1\r\n\r\n", limits).state());
  EXPECT_EQ(413, parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", limits).error().status);
  EXPECT_EQ(State::complete,
            parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789", limits).state());
  // The body waits for its last byte.
  EXPECT_EQ(State::need_more, parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n012", limits).state());
}

TEST(ServerHttp, Responses) {
  std::string r = http_response(404, {{"Content-Type", "text/plain"}}, "gone");
  EXPECT_EQ("HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 4\r\nConnection: close\r\n\r\ngone", r);
  EXPECT_NE(std::string::npos, http_json_error(401, "no").find("{\"detail\":\"no\"}"));
}

TEST(ServerAuth, TokensAreComparedWhole) {
  EXPECT_TRUE(tokens_equal("abc123", "abc123"));
  EXPECT_FALSE(tokens_equal("abc123", "abc124"));
  EXPECT_FALSE(tokens_equal("abc123", "abc1234"));  // a prefix is not enough
  EXPECT_FALSE(tokens_equal("abc1234", "abc123"));
  EXPECT_FALSE(tokens_equal("", ""));                // no token never matches
  std::string a = generate_token(), b = generate_token();
  EXPECT_EQ(64u, a.size());
  EXPECT_NE(a, b);
}

TEST(ServerAuth, TheTokenComesFromXApiKeyOrBearer) {
  HttpRequest r;
  EXPECT_EQ("", request_token(r));
  r.headers = {{"Authorization", "Bearer t0k"}};
  EXPECT_EQ("t0k", request_token(r));
  r.headers = {{"authorization", "Basic dXNlcg=="}};
  EXPECT_EQ("", request_token(r));
  r.headers = {{"x-api-key", "k3y"}, {"Authorization", "Bearer other"}};
  EXPECT_EQ("k3y", request_token(r));
}

}  // namespace
}  // namespace oishell::agent::server
