// Unit tests for the tunnel inspector (runtime/relay/tunnel_inspect.h): what it releases, when, and why it refuses,
// with the client's bytes arriving in any split.
#include "runtime/relay/tunnel_inspect.h"

#include <gtest/gtest.h>

#include "tests/relay/tls_hello.h"

namespace oishell::relay {
namespace {

using testing::tls_client_hello;

// Plays the connection's part: holds what was not released, offers it again with what follows.
struct Feeder {
  explicit Feeder(std::string host = "api.example.com", uint16_t port = 443, size_t max_head = 64 * 1024)
      : inspector(std::move(host), port, max_head) {}
  // Feeds `bytes` in pieces of `piece` bytes; returns the last step. `forwarded` collects what was released.
  InspectStep feed(std::string_view bytes, size_t piece = 1 << 20, bool eof = false) {
    InspectStep step;
    do {
      size_t n = std::min(piece, bytes.size());
      held.append(bytes.substr(0, n));
      bytes.remove_prefix(n);
      step = inspector.inspect(held, eof && bytes.empty());
      if (step.state == InspectStep::State::need_more) {
        forwarded += held.substr(0, step.released);
        held.erase(0, step.released);
      } else if (step.state == InspectStep::State::opaque) {
        forwarded += held;
        held.clear();
        return step;
      } else {
        return step;
      }
    } while (!bytes.empty());
    return step;
  }
  TunnelInspector inspector;
  std::string held, forwarded;
};

TEST(TunnelInspect, RequestReleasedOnlyWhenItsWholeHeadIsChecked) {
  std::string request = "GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n";
  for (size_t piece : {size_t{1}, size_t{7}, request.size()}) {
    Feeder f;
    InspectStep step = f.feed(request.substr(0, request.size() - 1), piece);
    EXPECT_EQ(InspectStep::State::need_more, step.state);
    EXPECT_EQ("", f.forwarded) << "piece " << piece;  // nothing before the blank line ends the head
    step = f.feed("\n");
    EXPECT_EQ(InspectStep::State::need_more, step.state);
    EXPECT_EQ(request, f.forwarded);
    EXPECT_EQ("", f.held);
  }
}

TEST(TunnelInspect, BodiesAreSkippedAndTheNextRequestChecked) {
  Feeder f;
  std::string chunked = "POST /up HTTP/1.1\r\nHost: API.example.com:443\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "5\r\nHost:\r\n0\r\n\r\n";
  std::string sized = "PUT /x HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 4\r\n\r\nGET ";
  std::string next = "\r\nOPTIONS * HTTP/1.1\r\nHost: api.example.com\r\n\r\n";  // a blank line may precede it
  EXPECT_EQ(InspectStep::State::need_more, f.feed(chunked + sized + next, 3).state);
  EXPECT_EQ(chunked + sized + next, f.forwarded);
  InspectStep refused = f.feed("GET / HTTP/1.1\r\nHost: api.example.com.evil.example\r\n\r\n");
  EXPECT_EQ(InspectStep::State::refused, refused.state);
  EXPECT_EQ("inspection: HTTP Host mismatch", refused.rule);
  EXPECT_EQ(chunked + sized + next, f.forwarded);  // nothing of the refused request
}

TEST(TunnelInspect, BodyBytesGoAsTheyComeWithoutWaitingForTheEnd) {
  Feeder f;
  std::string head = "POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 1000000\r\n\r\n";
  f.feed(head + std::string(5000, 'b'));
  EXPECT_EQ(head.size() + 5000, f.forwarded.size());
  EXPECT_EQ("", f.held);
}

TEST(TunnelInspect, TlsClientHelloInPieces) {
  std::string hello = tls_client_hello("API.example.com.", /*split_records=*/true);
  Feeder f;
  InspectStep step = f.feed(hello.substr(0, hello.size() - 1), 5);
  EXPECT_EQ(InspectStep::State::need_more, step.state);
  EXPECT_EQ("", f.forwarded);
  step = f.feed(hello.substr(hello.size() - 1) + "encrypted");
  EXPECT_EQ(InspectStep::State::opaque, step.state);
  EXPECT_EQ(hello + "encrypted", f.forwarded);

  Feeder other;
  step = other.feed(tls_client_hello("cdn.example.net"));
  EXPECT_EQ(InspectStep::State::refused, step.state);
  EXPECT_EQ("inspection: TLS server name mismatch", step.rule);
  EXPECT_EQ("TLS server name `cdn.example.net` does not match the requested host `api.example.com`", step.reason);
}

TEST(TunnelInspect, IpDestinationTakesNamelessTlsAndItsOwnAddressAsHost) {
  Feeder v4("192.0.2.1", 443);
  EXPECT_EQ(InspectStep::State::opaque, v4.feed(tls_client_hello("")).state);
  Feeder named("192.0.2.1", 443);
  EXPECT_EQ("inspection: TLS server name on an IP destination", named.feed(tls_client_hello("a.example")).rule);
  Feeder v6("2001:db8::1", 8080);
  EXPECT_EQ(InspectStep::State::need_more, v6.feed("GET / HTTP/1.1\r\nHost: [2001:DB8:0::1]:8080\r\n\r\n").state);
  Feeder v6_name("2001:db8::1", 8080);
  EXPECT_EQ("inspection: HTTP Host mismatch", v6_name.feed("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n").rule);
}

TEST(TunnelInspect, RefusalsNameWhatWasWrong) {
  struct Case {
    std::string bytes;
    std::string rule;
    bool eof = false;
  } cases[] = {
      {std::string("\x16\x03\x01\x00\x05\x02\x00\x00\x01\x00", 10), "inspection: malformed TLS ClientHello"},
      {std::string("\x16\x03\x01\x00", 4), "inspection: incomplete TLS ClientHello", true},
      {"GET / HTTP/1.1\r\nHost: api.exam", "inspection: incomplete HTTP request", true},
      {std::string("\x05\x01\x00", 3), "inspection: not TLS or HTTP"},
      {"GET\x01", "inspection: not TLS or HTTP"},
      {"HELO mail.example\r\n", "inspection: not TLS or HTTP"},
      {"GET / HTTP/1.1\r\n\r\n", "inspection: HTTP Host header"},
      {"GET / HTTP/1.1\r\nHost: api.example.com:80\r\n\r\n", "inspection: HTTP Host mismatch"},
      {"GET / HTTP/1.1\r\nHost: user@api.example.com\r\n\r\n", "inspection: HTTP Host mismatch"},
      {"GET https://api.example.com:443/ HTTP/1.1\r\nHost: x.example\r\n\r\n", "inspection: HTTP Host mismatch"},
      {"GET ftp://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
       "inspection: HTTP request target mismatch"},
      {"GET / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
       "inspection: malformed HTTP request"},
      {"GET / HTTP/1.1\r\nHost: api.example.com\r\nUpgrade: websocket, h2c\r\n\r\n", "inspection: HTTP/2 upgrade"},
  };
  for (const auto& c : cases) {
    Feeder f;
    InspectStep step = f.feed(c.bytes, 1 << 20, c.eof);
    EXPECT_EQ(InspectStep::State::refused, step.state) << c.bytes;
    EXPECT_EQ(c.rule, step.rule) << c.bytes << ": " << step.reason;
    EXPECT_EQ("", f.forwarded) << c.bytes;
  }
  // The neighbours: an absolute-form target on the same authority, a client that sent nothing before its end.
  Feeder absolute;
  EXPECT_EQ(InspectStep::State::need_more,
            absolute.feed("GET https://api.example.com/x HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n").state);
  Feeder silent;
  EXPECT_EQ(InspectStep::State::need_more, silent.feed("", 1, /*eof=*/true).state);
}

TEST(TunnelInspect, HeadLargerThanTheLimitIsRefused) {
  Feeder f("api.example.com", 443, /*max_head=*/1024);
  InspectStep step = f.feed("GET / HTTP/1.1\r\nHost: api.example.com\r\nX: " + std::string(2000, 'a'));
  EXPECT_EQ(InspectStep::State::refused, step.state);
  EXPECT_EQ("inspection: malformed HTTP request", step.rule);
  EXPECT_EQ("request head larger than 1024 bytes", step.reason);
}

TEST(TunnelInspect, WebSocketUpgradeEndsTheChecks) {
  Feeder f;
  std::string upgrade = "GET /ws HTTP/1.1\r\nHost: api.example.com\r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\n\r\n";
  InspectStep step = f.feed(upgrade + "\x81\x02hi");
  EXPECT_EQ(InspectStep::State::opaque, step.state);
  EXPECT_EQ(upgrade + "\x81\x02hi", f.forwarded);
}

}  // namespace
}  // namespace oishell::relay
