// The header-line walker shared by the credential rewrite and the HTTPS terminator (runtime/relay/http_head_lines.h).
#include "runtime/relay/http_head_lines.h"

#include <gtest/gtest.h>

namespace oishell::relay {
namespace {

TEST(HttpHeadLines, AHeaderLineSplitsAroundItsOptionalWhitespace) {
  auto h = parse_header_line("X-Token: \t abc def \t");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->name, "X-Token");
  EXPECT_EQ(h->value, "abc def");
  EXPECT_EQ(h->line.substr(0, h->value_begin), "X-Token: \t ");
  EXPECT_EQ(h->line.substr(h->value_end), " \t");
  auto empty = parse_header_line("Empty:");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->value, "");
  EXPECT_FALSE(parse_header_line("no colon here"));
}

TEST(HttpHeadLines, TheLinesOfAHeadAfterItsRequestLine) {
  const std::string head = "GET /a:b HTTP/1.1\r\nHost: h\r\nbroken\r\nAccept: */*\r\n\r\nBody: not a header\r\n";
  const auto lines = header_lines(head);
  ASSERT_EQ(lines.size(), 2u);  // not the request line (its colon), not the line without one, nothing past the end
  EXPECT_EQ(lines[0].name, "Host");
  EXPECT_EQ(lines[1].value, "*/*");
}

TEST(HttpHeadLines, TokensOfAScheme) {
  const std::string head =
      "GET / HTTP/1.1\r\nauthorization: basic  dXNlcjpw \r\nAuthorization: Bearer t1\r\nAuthorization: Basicx y\r\n"
      "Proxy-Authorization: Basic other\r\n\r\n";
  EXPECT_EQ(header_tokens(head, "Authorization", "Basic"), std::vector<std::string>{"dXNlcjpw"});
  EXPECT_EQ(header_tokens(head, "AUTHORIZATION", "bearer"), std::vector<std::string>{"t1"});
  EXPECT_TRUE(header_tokens(head, "Cookie", "Basic").empty());
}

TEST(HttpHeadLines, IdentityEncodingReplacesEveryAcceptEncoding) {
  EXPECT_EQ(with_identity_encoding("GET / HTTP/1.1\r\nAccept-Encoding: gzip\r\nHost: h\r\naccept-encoding: br\r\n\r\n"),
            "GET / HTTP/1.1\r\nHost: h\r\nAccept-Encoding: identity\r\n\r\n");
  EXPECT_EQ(with_identity_encoding("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
            "GET / HTTP/1.1\r\nHost: h\r\nAccept-Encoding: identity\r\n\r\n");
  EXPECT_EQ(trim_ows(" \t x y\t "), "x y");
}

// Empty lines before the request line (RFC 9112 2.2) are part of what the parser consumed: the walker starts after
// them. Before, the first empty line was taken for the request line and the next for the end of the head, so a
// credential header was never seen and the identity head began with a blank line (tests/fuzz/relay_http_request).
TEST(HttpHeadLines, EmptyLinesBeforeTheRequestLineAreSkipped) {
  const std::string head = "\r\n\r\nGET / HTTP/1.1\r\nAuthorization: Bearer t1\r\nAccept-Encoding: br\r\n\r\n";
  EXPECT_EQ(header_tokens(head, "Authorization", "Bearer"), std::vector<std::string>{"t1"});
  ASSERT_EQ(header_lines(head).size(), 2u);
  EXPECT_EQ(with_identity_encoding(head), "GET / HTTP/1.1\r\nAuthorization: Bearer t1\r\nAccept-Encoding: identity\r\n\r\n");
  // The neighbour: a head without them reads as before.
  EXPECT_EQ(header_tokens(head.substr(4), "Authorization", "Bearer"), std::vector<std::string>{"t1"});
}

}  // namespace
}  // namespace oishell::relay
