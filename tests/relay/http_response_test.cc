// Unit tests for runtime/relay/http_response.h: response heads held to the request parser's strictness, and where
// each response ends (RFC 9112 6.3).
#include "runtime/relay/http_response.h"

#include <gtest/gtest.h>

namespace oishell::relay {
namespace {

ResponseFraming framing(const std::string& head, const std::string& method = "GET") {
  ResponseHeadParse parsed = parse_response_head(head, 64 * 1024);
  EXPECT_EQ(HeadStatus::complete, parsed.status) << parsed.error;
  auto result = response_body_framing(parsed, method);
  EXPECT_TRUE(result.is_ok()) << result.status().message();
  return result.is_ok() ? result.value() : ResponseFraming{};
}

TEST(HttpResponse, ParsesStatusLineAndHeaders) {
  std::string text = "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nX-A: b\r\n\r\nabcNEXT";
  ResponseHeadParse parsed = parse_response_head(text, 1024);
  ASSERT_EQ(HeadStatus::complete, parsed.status) << parsed.error;
  EXPECT_EQ(404, parsed.code);
  EXPECT_EQ("HTTP/1.1", parsed.version);
  EXPECT_EQ(text.find("abc"), parsed.consumed);
  ASSERT_EQ(2u, parsed.headers.size());
  EXPECT_EQ("X-A", parsed.headers[1].name);
  // Without a reason phrase (RFC 9112 4) and as HTTP/1.0.
  EXPECT_EQ(HeadStatus::complete, parse_response_head("HTTP/1.0 204\r\n\r\n", 1024).status);
  EXPECT_EQ(HeadStatus::incomplete, parse_response_head("HTTP/1.1 200 OK\r\nA: b\r\n", 1024).status);
}

TEST(HttpResponse, RefusesWhatCouldBeReadTwoWays) {
  for (std::string_view bad : {"HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 099 x\r\n\r\n",
                                 "HTTP/1.1 200OK\r\n\r\n", "HTTP/1.1 200 OK\r\nA: b\n\r\n",
                                 "HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n", "HTTP/1.1 200 O\x01K\r\n\r\n"}) {
    EXPECT_EQ(HeadStatus::malformed, parse_response_head(bad, 1024).status) << bad;
  }
  EXPECT_EQ(HeadStatus::too_large,
            parse_response_head("HTTP/1.1 200 OK\r\nA: " + std::string(2000, 'a') + "\r\n\r\n", 1024).status);
  ResponseHeadParse both = parse_response_head(
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 1024);
  ASSERT_EQ(HeadStatus::complete, both.status);
  EXPECT_FALSE(response_body_framing(both, "GET").is_ok());
  ResponseHeadParse two =
      parse_response_head("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 1024);
  EXPECT_FALSE(response_body_framing(two, "GET").is_ok());
}

TEST(HttpResponse, FramingFollowsRfc9112) {
  EXPECT_EQ(ResponseBody::length, framing("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n").kind);
  EXPECT_EQ(12u, framing("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n").length);
  EXPECT_EQ(ResponseBody::none, framing("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").kind);
  EXPECT_EQ(ResponseBody::chunked, framing("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").kind);
  EXPECT_EQ(ResponseBody::until_close, framing("HTTP/1.1 200 OK\r\n\r\n").kind);
  // No body whatever the headers say.
  EXPECT_EQ(ResponseBody::none, framing("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", "HEAD").kind);
  EXPECT_EQ(ResponseBody::none, framing("HTTP/1.1 204 No Content\r\nContent-Length: 12\r\n\r\n").kind);
  EXPECT_EQ(ResponseBody::none, framing("HTTP/1.1 304 Not Modified\r\nContent-Length: 12\r\n\r\n").kind);
  EXPECT_EQ(ResponseBody::none, framing("HTTP/1.1 100 Continue\r\n\r\n").kind);
}

}  // namespace
}  // namespace oishell::relay
