#pragma once
// A minimal TLS 1.2-style ClientHello with or without a server_name extension, for the SNI tests.
#include <string>

namespace oishell::relay::testing {

inline std::string tls_u16(size_t v) { return {static_cast<char>(v >> 8 & 0xff), static_cast<char>(v & 0xff)}; }

// With split_records, the handshake message is spread over two TLS records (as some clients send it). An empty
// `sni` leaves the server_name extension out (as clients do for an IP address).
inline std::string tls_client_hello(const std::string& sni, bool split_records = false) {
  std::string name_list = std::string(1, '\0') + tls_u16(sni.size()) + sni;
  std::string sni_ext = tls_u16(name_list.size()) + name_list;
  std::string exts = tls_u16(0x0a) + tls_u16(4) + std::string("\x00\x02\x00\x17", 4);  // supported_groups
  if (!sni.empty()) exts += tls_u16(0) + tls_u16(sni_ext.size()) + sni_ext;
  std::string body = std::string("\x03\x03", 2) + std::string(32, 'r') + std::string(1, '\0') + tls_u16(2) +
                     std::string("\x13\x01", 2) + std::string("\x01\x00", 2) + tls_u16(exts.size()) + exts;
  std::string hs = std::string(1, '\x01') + std::string(1, '\0') + tls_u16(body.size()) + body;
  if (!split_records) return std::string("\x16\x03\x01", 3) + tls_u16(hs.size()) + hs;
  size_t half = hs.size() / 2;
  return std::string("\x16\x03\x01", 3) + tls_u16(half) + hs.substr(0, half) + std::string("\x16\x03\x01", 3) +
         tls_u16(hs.size() - half) + hs.substr(half);
}

}  // namespace oishell::relay::testing
