#include "runtime/relay/socks5.h"

#include <arpa/inet.h>

namespace oishell::relay {

Socks5Parse parse_socks5_greeting(std::string_view data, Socks5Greeting& out, std::string& error) {
  if (data.empty()) return Socks5Parse::incomplete;
  if (static_cast<uint8_t>(data[0]) != 5) {
    error = "not a SOCKS5 greeting (version byte " + std::to_string(static_cast<uint8_t>(data[0])) + ")";
    return Socks5Parse::error;
  }
  if (data.size() < 2) return Socks5Parse::incomplete;
  size_t n = static_cast<uint8_t>(data[1]);
  if (n == 0) {
    error = "SOCKS5 greeting offers no method";
    return Socks5Parse::error;
  }
  if (data.size() < 2 + n) return Socks5Parse::incomplete;
  out.no_auth_offered = data.substr(2, n).find('\0') != std::string_view::npos;
  out.consumed = 2 + n;
  return Socks5Parse::complete;
}

Socks5Parse parse_socks5_request(std::string_view data, Socks5Request& out, std::string& error) {
  if (data.size() < 4) {
    if (!data.empty() && static_cast<uint8_t>(data[0]) != 5) {
      error = "bad SOCKS5 request version";
      out.refusal = Socks5Reply::general_failure;
      return Socks5Parse::error;
    }
    return Socks5Parse::incomplete;
  }
  auto byte = [&](size_t i) { return static_cast<uint8_t>(data[i]); };
  if (byte(0) != 5 || byte(2) != 0) {
    error = "bad SOCKS5 request header";
    out.refusal = Socks5Reply::general_failure;
    return Socks5Parse::error;
  }
  if (byte(1) != 1) {
    error = byte(1) == 2 ? "SOCKS5 BIND is not supported" : byte(1) == 3 ? "SOCKS5 UDP ASSOCIATE is not supported"
                                                                          : "unknown SOCKS5 command";
    out.refusal = Socks5Reply::command_not_supported;
    return Socks5Parse::error;
  }
  size_t addr_len = 0;
  size_t addr_start = 4;
  switch (byte(3)) {
    case 1:
      addr_len = 4;
      break;
    case 4:
      addr_len = 16;
      break;
    case 3:
      if (data.size() < 5) return Socks5Parse::incomplete;
      addr_len = byte(4);
      addr_start = 5;
      if (addr_len == 0) {
        error = "empty SOCKS5 domain name";
        out.refusal = Socks5Reply::general_failure;
        return Socks5Parse::error;
      }
      break;
    default:
      error = "unknown SOCKS5 address type " + std::to_string(byte(3));
      out.refusal = Socks5Reply::address_type_not_supported;
      return Socks5Parse::error;
  }
  if (data.size() < addr_start + addr_len + 2) return Socks5Parse::incomplete;
  std::string_view addr = data.substr(addr_start, addr_len);
  if (byte(3) == 3) {
    out.host = std::string(addr);
  } else {
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(byte(3) == 1 ? AF_INET : AF_INET6, addr.data(), text, sizeof text);
    out.host = text;
  }
  out.port = static_cast<uint16_t>(byte(addr_start + addr_len) << 8 | byte(addr_start + addr_len + 1));
  out.consumed = addr_start + addr_len + 2;
  if (out.port == 0) {
    error = "SOCKS5 destination port 0";
    out.refusal = Socks5Reply::not_allowed;
    return Socks5Parse::error;
  }
  return Socks5Parse::complete;
}

std::string socks5_method_reply(bool accepted) { return std::string("\x05", 1) + (accepted ? '\0' : '\xff'); }

std::string socks5_reply(Socks5Reply code) {
  std::string out("\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);
  out[1] = static_cast<char>(code);
  return out;
}

}  // namespace oishell::relay
