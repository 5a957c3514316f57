#include "agent/server/websocket.h"

#include "agent/server/digest.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)
namespace {

constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

}  // namespace

std::string ws_accept_key(std::string_view client_key) {
  std::string text(client_key);
  text += kGuid;
  auto digest = sha1(text);
  return base64_encode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

bool is_websocket_upgrade(const HttpRequest& request) { return request.header_has_token("Upgrade", "websocket"); }

std::optional<HttpError> check_websocket_upgrade(const HttpRequest& request) {
  if (request.method != "GET") return HttpError{405, "a websocket handshake is a GET request"};
  if (request.minor_version != 1) return HttpError{400, "a websocket handshake needs HTTP/1.1"};
  if (!request.header_has_token("Connection", "Upgrade")) {
    return HttpError{400, "a websocket handshake needs `Connection: Upgrade`"};
  }
  const std::string* version = request.header("Sec-WebSocket-Version");
  if (!version || *version != "13") return HttpError{426, "only websocket version 13 is served"};
  const std::string* key = request.header("Sec-WebSocket-Key");
  bool key_ok = key && key->size() == 24 && (*key)[22] == '=' && (*key)[23] == '=';
  for (size_t i = 0; key_ok && i < 22; ++i) key_ok = is_base64_char((*key)[i]);
  if (!key_ok) return HttpError{400, "Sec-WebSocket-Key is not 16 bytes in base64"};
  return std::nullopt;
}

std::string ws_handshake_response(const HttpRequest& request) {
  const std::string* key = request.header("Sec-WebSocket-Key");
  return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
         ws_accept_key(key ? *key : "") + "\r\n\r\n";
}

std::string ws_encode_frame(WsOpcode opcode, std::string_view payload, bool fin, std::optional<uint32_t> mask) {
  std::string out;
  out.reserve(payload.size() + 14);
  out.push_back(static_cast<char>((fin ? 0x80 : 0) | static_cast<uint8_t>(opcode)));
  uint8_t mask_bit = mask ? 0x80 : 0;
  size_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(mask_bit | n));
  } else if (n <= 0xffff) {
    out.push_back(static_cast<char>(mask_bit | 126));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xff));
  } else {
    out.push_back(static_cast<char>(mask_bit | 127));
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((static_cast<uint64_t>(n) >> (8 * i)) & 0xff));
  }
  if (!mask) {
    out.append(payload);
    return out;
  }
  uint8_t key[4] = {static_cast<uint8_t>(*mask >> 24), static_cast<uint8_t>(*mask >> 16),
                    static_cast<uint8_t>(*mask >> 8), static_cast<uint8_t>(*mask)};
  out.append(reinterpret_cast<const char*>(key), 4);
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(static_cast<uint8_t>(payload[i]) ^ key[i % 4]));
  return out;
}

std::string ws_encode_close(uint16_t code, std::string_view reason) {
  std::string payload;
  payload.push_back(static_cast<char>(code >> 8));
  payload.push_back(static_cast<char>(code & 0xff));
  reason = reason.substr(0, 123);
  // Cut at a character boundary: the reason must stay UTF-8.
  while (!reason.empty() && !is_valid_utf8(reason)) reason.remove_suffix(1);
  payload.append(reason);
  return ws_encode_frame(WsOpcode::close, payload);
}

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<uint8_t>(s[i]);
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<uint8_t>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += len;
  }
  return true;
}

WsEvent WsFrameParser::fail(uint16_t code, std::string message) {
  error_ = WsEvent{WsEvent::Kind::error, std::move(message), code};
  buf_.clear();
  pos_ = 0;
  message_.clear();
  return *error_;
}

std::optional<WsEvent> WsFrameParser::next() {
  while (true) {
    if (error_) return error_;
    std::string_view b = std::string_view(buf_).substr(pos_);
    if (b.size() < 2) break;
    auto b0 = static_cast<uint8_t>(b[0]), b1 = static_cast<uint8_t>(b[1]);
    bool fin = b0 & 0x80;
    auto opcode = static_cast<WsOpcode>(b0 & 0x0f);
    bool masked = b1 & 0x80;
    if (b0 & 0x70) return fail(ws_close::protocol_error, "reserved bits set (no extension was negotiated)");
    switch (opcode) {
      case WsOpcode::continuation:
      case WsOpcode::text:
      case WsOpcode::binary:
      case WsOpcode::close:
      case WsOpcode::ping:
      case WsOpcode::pong:
        break;
      default:
        return fail(ws_close::protocol_error, "unknown opcode " + std::to_string(b0 & 0x0f));
    }
    bool control = (b0 & 0x08) != 0;
    if (require_mask_ && !masked) return fail(ws_close::protocol_error, "a client frame is not masked");
    uint64_t len = b1 & 0x7f;
    size_t head = 2;
    if (len == 126) {
      if (b.size() < 4) break;
      len = uint64_t{static_cast<uint8_t>(b[2])} << 8 | static_cast<uint8_t>(b[3]);
      head = 4;
      if (len < 126) return fail(ws_close::protocol_error, "a frame length is not in its shortest form");
    } else if (len == 127) {
      if (b.size() < 10) break;
      len = 0;
      for (int i = 0; i < 8; ++i) len = len << 8 | static_cast<uint8_t>(b[2 + i]);
      head = 10;
      if (len >> 63) return fail(ws_close::protocol_error, "a frame length has its top bit set");
      if (len <= 0xffff) return fail(ws_close::protocol_error, "a frame length is not in its shortest form");
    }
    if (control && (!fin || len > 125)) {
      return fail(ws_close::protocol_error, "a control frame is fragmented or longer than 125 bytes");
    }
    if (len > limits_.max_frame_bytes) {
      return fail(ws_close::too_big, "a frame of " + std::to_string(len) + " bytes is larger than the limit of " +
                                         std::to_string(limits_.max_frame_bytes));
    }
    if (!control) {
      if (opcode == WsOpcode::continuation && !in_message_) {
        return fail(ws_close::protocol_error, "a continuation frame outside a fragmented message");
      }
      if (opcode != WsOpcode::continuation && in_message_) {
        return fail(ws_close::protocol_error, "a new message inside a fragmented message");
      }
      if (message_.size() + len > limits_.max_message_bytes) {
        return fail(ws_close::too_big, "a message larger than the limit of " +
                                           std::to_string(limits_.max_message_bytes) + " bytes");
      }
    }
    size_t mask_len = masked ? 4 : 0;
    if (b.size() < head + mask_len + len) break;
    std::string payload(b.substr(head + mask_len, len));
    if (masked) {
      const auto* key = reinterpret_cast<const uint8_t*>(b.data() + head);
      for (size_t i = 0; i < payload.size(); ++i) {
        payload[i] = static_cast<char>(static_cast<uint8_t>(payload[i]) ^ key[i % 4]);
      }
    }
    pos_ += head + mask_len + len;
    if (pos_ > 64 * 1024 && pos_ * 2 > buf_.size()) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    if (control) {
      if (opcode == WsOpcode::ping) return WsEvent{WsEvent::Kind::ping, std::move(payload), 0};
      if (opcode == WsOpcode::pong) return WsEvent{WsEvent::Kind::pong, std::move(payload), 0};
      // close
      if (payload.size() == 1) return fail(ws_close::protocol_error, "a close frame with a one-byte body");
      uint16_t code = 1005;  // none given
      std::string reason;
      if (payload.size() >= 2) {
        code = static_cast<uint16_t>(static_cast<uint8_t>(payload[0]) << 8 | static_cast<uint8_t>(payload[1]));
        reason = payload.substr(2);
        if (!is_valid_utf8(reason)) return fail(ws_close::invalid_payload, "a close reason that is not UTF-8");
      }
      return WsEvent{WsEvent::Kind::close, std::move(reason), code};
    }
    if (opcode != WsOpcode::continuation) message_opcode_ = opcode;
    message_ += payload;
    in_message_ = !fin;
    if (!fin) continue;
    std::string message = std::move(message_);
    message_.clear();
    if (message_opcode_ == WsOpcode::text) {
      if (!is_valid_utf8(message)) return fail(ws_close::invalid_payload, "a text message that is not UTF-8");
      return WsEvent{WsEvent::Kind::text, std::move(message), 0};
    }
    return WsEvent{WsEvent::Kind::binary, std::move(message), 0};
  }
  if (pos_ > 0 && pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  }
  return std::nullopt;
}

}  // namespace oishell::agent::server
