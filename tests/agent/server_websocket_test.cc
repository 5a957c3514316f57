// The server's websocket layer (RFC 6455): the handshake's accept key and checks, the frame parser on the RFC's
// own examples, masking, fragmentation with control frames between the fragments, and every limit and protocol
// error with the close code it earns. Also SHA-1 and base64 on their standard test vectors.
#include <gtest/gtest.h>

#include "agent/server/digest.h"
#include "agent/server/websocket.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)
namespace {

using Kind = WsEvent::Kind;

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

std::string sha1_hex(std::string_view s) {
  auto d = sha1(s);
  return hex_encode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

TEST(ServerDigest, Sha1TestVectors) {
  EXPECT_EQ("da39a3ee5e6b4b0d3255bfef95601890afd80709", sha1_hex(""));
  EXPECT_EQ("a9993e364706816aba3e25717850c26c9cd0d89d", sha1_hex("abc"));
  EXPECT_EQ("84983e441c3bd26ebaae4aa1f95129e5e54670f1",
            sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"));  // two padding blocks
  EXPECT_EQ("34aa973cd4c4daa4f61eeb2bdbad27316534016f", sha1_hex(std::string(1000000, 'a')));
}

TEST(ServerDigest, Base64TestVectors) {  // RFC 4648 section 10
  EXPECT_EQ("", base64_encode(""));
  EXPECT_EQ("Zg==", base64_encode("f"));
  EXPECT_EQ("Zm8=", base64_encode("fo"));
  EXPECT_EQ("Zm9v", base64_encode("foo"));
  EXPECT_EQ("Zm9vYg==", base64_encode("foob"));
  EXPECT_EQ("Zm9vYmE=", base64_encode("fooba"));
  EXPECT_EQ("Zm9vYmFy", base64_encode("foobar"));
}

TEST(ServerWebsocket, AcceptKeyOfTheRfcExample) {  // RFC 6455 section 1.3
  EXPECT_EQ("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", ws_accept_key("dGhlIHNhbXBsZSBub25jZQ=="));
}

HttpRequest upgrade_request() {
  HttpRequest r;
  r.method = "GET";
  r.target = r.path = "/";
  r.headers = {{"Host", "127.0.0.1"}, {"Upgrade", "websocket"}, {"Connection", "Upgrade"},
               {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}, {"Sec-WebSocket-Version", "13"}};
  return r;
}

TEST(ServerWebsocket, HandshakeChecks) {
  HttpRequest r = upgrade_request();
  EXPECT_TRUE(is_websocket_upgrade(r));
  EXPECT_FALSE(check_websocket_upgrade(r).has_value());
  EXPECT_EQ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
            ws_handshake_response(r));
  HttpRequest post = r;
  post.method = "POST";
  EXPECT_EQ(405, check_websocket_upgrade(post)->status);
  HttpRequest v8 = r;
  v8.headers[4].second = "8";
  EXPECT_EQ(426, check_websocket_upgrade(v8)->status);
  HttpRequest short_key = r;
  short_key.headers[3].second = "c2hvcnQ=";
  EXPECT_EQ(400, check_websocket_upgrade(short_key)->status);
  HttpRequest no_connection = r;
  no_connection.headers[2].second = "keep-alive";
  EXPECT_EQ(400, check_websocket_upgrade(no_connection)->status);
}

TEST(ServerWebsocket, TheRfcMaskedTextExample) {  // RFC 6455 section 5.7: a masked "Hello"
  WsFrameParser p;
  p.feed(bytes({0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}));
  auto ev = p.next();
  ASSERT_TRUE(ev);
  EXPECT_EQ(Kind::text, ev->kind);
  EXPECT_EQ("Hello", ev->payload);
  EXPECT_FALSE(p.next());
  // What a client with that key sends is those bytes.
  EXPECT_EQ(bytes({0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}),
            ws_encode_frame(WsOpcode::text, "Hello", true, 0x37fa213d));
}

TEST(ServerWebsocket, TheRfcUnmaskedExamplesAndServerFrames) {
  WsFrameParser p({}, /*require_mask=*/false);
  // A fragmented unmasked text message ("Hel", "lo"), then an unmasked ping.
  p.feed(bytes({0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f, 0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}));
  auto a = p.next();
  ASSERT_TRUE(a);
  EXPECT_EQ(Kind::text, a->kind);
  EXPECT_EQ("Hello", a->payload);
  auto b = p.next();
  ASSERT_TRUE(b);
  EXPECT_EQ(Kind::ping, b->kind);
  EXPECT_EQ("Hello", b->payload);
  // Server frames: unmasked, with the 16- and 64-bit lengths.
  EXPECT_EQ(bytes({0x81, 0x05, 'H', 'e', 'l', 'l', 'o'}), ws_encode_frame(WsOpcode::text, "Hello"));
  EXPECT_EQ(bytes({0x82, 0x7e, 0x01, 0x00}), ws_encode_frame(WsOpcode::binary, std::string(256, 'x')).substr(0, 4));
  EXPECT_EQ(bytes({0x82, 0x7f, 0, 0, 0, 0, 0, 1, 0, 0}),
            ws_encode_frame(WsOpcode::binary, std::string(65536, 'x')).substr(0, 10));
  EXPECT_EQ(bytes({0x88, 0x02, 0x03, 0xe8}), ws_encode_close(1000, ""));
}

TEST(ServerWebsocket, FragmentsWithAPingBetweenAndByteByByte) {
  std::string wire = ws_encode_frame(WsOpcode::text, "{\"role\":", false, 0x01020304) +
                     ws_encode_frame(WsOpcode::ping, "p", true, 0x0a0b0c0d) +
                     ws_encode_frame(WsOpcode::continuation, "\"user\"", false, 0x11223344) +
                     ws_encode_frame(WsOpcode::continuation, "}", true, 0x55667788) +
                     ws_encode_frame(WsOpcode::binary, std::string(70000, '\xff'), true, 0xdeadbeef) +
                     ws_encode_frame(WsOpcode::close, bytes({0x03, 0xe8}) + "bye", true, 0x01010101);
  WsFrameParser p;
  std::vector<WsEvent> events;
  for (char c : wire) {
    p.feed(std::string_view(&c, 1));
    while (auto ev = p.next()) events.push_back(*ev);
  }
  ASSERT_EQ(4u, events.size());
  EXPECT_EQ(Kind::ping, events[0].kind);  // a control frame may come between fragments
  EXPECT_EQ(Kind::text, events[1].kind);
  EXPECT_EQ("{\"role\":\"user\"}", events[1].payload);
  EXPECT_EQ(Kind::binary, events[2].kind);
  EXPECT_EQ(std::string(70000, '\xff'), events[2].payload);
  EXPECT_EQ(Kind::close, events[3].kind);
  EXPECT_EQ(1000, events[3].close_code);
  EXPECT_EQ("bye", events[3].payload);
}

struct BadFrames {
  std::string name;
  std::string wire;
  uint16_t code;
};

std::vector<BadFrames> bad_frames() {
  WsLimits small;
  return {
      {"unmasked", ws_encode_frame(WsOpcode::text, "hi"), ws_close::protocol_error},
      {"reserved bit", bytes({0xc1, 0x80, 0, 0, 0, 0}), ws_close::protocol_error},
      {"unknown opcode", bytes({0x83, 0x80, 0, 0, 0, 0}), ws_close::protocol_error},
      {"fragmented ping", ws_encode_frame(WsOpcode::ping, "x", false, 1), ws_close::protocol_error},
      {"long ping", ws_encode_frame(WsOpcode::ping, std::string(126, 'x'), true, 1), ws_close::protocol_error},
      {"stray continuation", ws_encode_frame(WsOpcode::continuation, "x", true, 1), ws_close::protocol_error},
      {"text inside a fragmented message",
       ws_encode_frame(WsOpcode::text, "a", false, 1) + ws_encode_frame(WsOpcode::text, "b", true, 1),
       ws_close::protocol_error},
      {"non-minimal length", bytes({0x81, 0xfe, 0x00, 0x05, 0, 0, 0, 0, 'a', 'b', 'c', 'd', 'e'}),
       ws_close::protocol_error},
      {"top bit of a 64-bit length", bytes({0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0}), ws_close::protocol_error},
      {"one-byte close", bytes({0x88, 0x81, 0, 0, 0, 0, 0x03}), ws_close::protocol_error},
      {"text not UTF-8", ws_encode_frame(WsOpcode::text, "\xc3\x28", true, 7), ws_close::invalid_payload},
      {"surrogate in text", ws_encode_frame(WsOpcode::text, "\xed\xa0\x80", true, 7), ws_close::invalid_payload},
  };
}

TEST(ServerWebsocket, ProtocolErrorsEarnTheirCloseCode) {
  for (const auto& c : bad_frames()) {
    WsFrameParser p;
    p.feed(c.wire);
    auto ev = p.next();
    ASSERT_TRUE(ev) << c.name;
    EXPECT_EQ(Kind::error, ev->kind) << c.name;
    EXPECT_EQ(c.code, ev->close_code) << c.name << ": " << ev->payload;
    // It stays failed.
    p.feed(ws_encode_frame(WsOpcode::text, "ok", true, 1));
    EXPECT_EQ(Kind::error, p.next()->kind) << c.name;
  }
}

TEST(ServerWebsocket, AFrameLargerThanTheLimitIsRefusedFromItsHeader) {
  WsLimits limits;
  limits.max_frame_bytes = 1000;
  limits.max_message_bytes = 1500;
  WsFrameParser p(limits);
  // Only the header of a 1 GiB frame: refused before any of the payload is buffered.
  p.feed(bytes({0x82, 0xff, 0, 0, 0, 0, 0x40, 0, 0, 0, 1, 2, 3, 4}));
  auto ev = p.next();
  ASSERT_TRUE(ev);
  EXPECT_EQ(Kind::error, ev->kind);
  EXPECT_EQ(ws_close::too_big, ev->close_code);
  // Fragments each under the frame limit that add up to more than the message limit.
  WsFrameParser q(limits);
  q.feed(ws_encode_frame(WsOpcode::text, std::string(900, 'a'), false, 1));
  EXPECT_FALSE(q.next());
  q.feed(ws_encode_frame(WsOpcode::continuation, std::string(900, 'a'), true, 1));
  auto big = q.next();
  ASSERT_TRUE(big);
  EXPECT_EQ(ws_close::too_big, big->close_code);
  // At the limits: accepted.
  WsFrameParser r(limits);
  r.feed(ws_encode_frame(WsOpcode::text, std::string(1000, 'a'), false, 1) +
         ws_encode_frame(WsOpcode::continuation, std::string(500, 'a'), true, 1));
  EXPECT_EQ(Kind::text, r.next()->kind);
}

TEST(ServerWebsocket, Utf8) {
  EXPECT_TRUE(is_valid_utf8("plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));          // cut
}

}  // namespace
}  // namespace oishell::agent::server
