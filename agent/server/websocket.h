#pragma once
// The websocket protocol (RFC 6455) on the server side: the opening handshake's checks and accept key, and an
// incremental frame parser that assembles messages under limits. Independent of the agent and of sockets: bytes in,
// messages and frames to send out.
//
// Refused (the close code to send in parentheses): unmasked client frames, reserved bits (no extension is
// negotiated), unknown opcodes, control frames that are fragmented or longer than 125 bytes, continuation frames
// outside a fragmented message and data frames inside one, non-minimal or 2^63+ lengths (1002); a frame longer than
// max_frame_bytes or a message longer than max_message_bytes (1009); text that is not UTF-8 (1007).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/http/http_message.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)

enum class WsOpcode : uint8_t { continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA };

// Close codes (RFC 6455 section 7.4.1).
namespace ws_close {
inline constexpr uint16_t normal = 1000;
inline constexpr uint16_t going_away = 1001;
inline constexpr uint16_t protocol_error = 1002;
inline constexpr uint16_t unsupported_data = 1003;
inline constexpr uint16_t invalid_payload = 1007;
inline constexpr uint16_t policy_violation = 1008;
inline constexpr uint16_t too_big = 1009;
inline constexpr uint16_t internal_error = 1011;
}  // namespace ws_close

// Sec-WebSocket-Accept for a Sec-WebSocket-Key: base64(SHA-1(key + the RFC's GUID)).
std::string ws_accept_key(std::string_view client_key);

// Whether `request` asks for a websocket (Upgrade: websocket).
bool is_websocket_upgrade(const HttpRequest& request);
// Checks an upgrade request (GET, HTTP/1.1, Connection: Upgrade, Sec-WebSocket-Version: 13, a key of 16 bytes in
// base64). nullopt when valid; else the error to answer (426 names the version wanted).
std::optional<HttpError> check_websocket_upgrade(const HttpRequest& request);
// The 101 response that completes the handshake.
std::string ws_handshake_response(const HttpRequest& request);

// One frame to send. Server frames are not masked; a client (tests) passes a masking key.
std::string ws_encode_frame(WsOpcode opcode, std::string_view payload, bool fin = true,
                            std::optional<uint32_t> mask = std::nullopt);
// A close frame with a code and a reason (cut to fit a control frame).
std::string ws_encode_close(uint16_t code, std::string_view reason);

bool is_valid_utf8(std::string_view s);

struct WsLimits {
  size_t max_frame_bytes = 1024 * 1024;
  size_t max_message_bytes = 4 * 1024 * 1024;
};

struct WsEvent {
  enum class Kind { text, binary, ping, pong, close, error };
  Kind kind = Kind::text;
  std::string payload;      // message (text/binary), ping/pong data, close reason, or the error in words
  uint16_t close_code = 0;  // close: the peer's code (1005 when none); error: the code to close with
};

class WsFrameParser {
 public:
  explicit WsFrameParser(WsLimits limits = {}, bool require_mask = true)
      : limits_(limits), require_mask_(require_mask) {}
  void feed(std::string_view data) { buf_.append(data); }
  // The next complete event; nullopt when more bytes are needed. After an error every call repeats it.
  std::optional<WsEvent> next();

 private:
  WsEvent fail(uint16_t code, std::string message);

  WsLimits limits_;
  bool require_mask_;
  std::string buf_;
  size_t pos_ = 0;
  bool in_message_ = false;
  WsOpcode message_opcode_ = WsOpcode::text;
  std::string message_;
  std::optional<WsEvent> error_;
};

}  // namespace oishell::agent::server
