#pragma once
// SOCKS5 (RFC 1928) handshake parsing for the relay: no-authentication method only, CONNECT only, with domain
// names and IPv4/IPv6 literals. Pure functions.
#include <cstdint>
#include <string>
#include <string_view>

namespace oishell::relay {

// Reply codes (RFC 1928 section 6).
enum class Socks5Reply : uint8_t {
  succeeded = 0x00,
  general_failure = 0x01,
  not_allowed = 0x02,
  network_unreachable = 0x03,
  host_unreachable = 0x04,
  connection_refused = 0x05,
  ttl_expired = 0x06,
  command_not_supported = 0x07,
  address_type_not_supported = 0x08,
};

enum class Socks5Parse { incomplete, complete, error };

struct Socks5Greeting {
  size_t consumed = 0;
  bool no_auth_offered = false;
};

// The method-selection message: VER=5 NMETHODS METHODS...
Socks5Parse parse_socks5_greeting(std::string_view data, Socks5Greeting& out, std::string& error);

struct Socks5Request {
  size_t consumed = 0;
  std::string host;  // as sent: a domain name, or the IP literal's text
  uint16_t port = 0;
  Socks5Reply refusal = Socks5Reply::general_failure;  // on error: the code to answer
};

// The request: VER=5 CMD RSV ATYP DST.ADDR DST.PORT. Anything but CONNECT is an error with a refusal code.
Socks5Parse parse_socks5_request(std::string_view data, Socks5Request& out, std::string& error);

// The method-selection answer: 05 00 (no authentication) or 05 FF (no acceptable method).
std::string socks5_method_reply(bool accepted);
// A reply with the given code and bound address 0.0.0.0:0.
std::string socks5_reply(Socks5Reply code);

}  // namespace oishell::relay
