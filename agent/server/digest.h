#pragma once
// The two encodings the websocket handshake needs (RFC 6455 section 4.2.2): SHA-1 (FIPS 180-4) and base64 (RFC
// 4648). Pure functions, written here so the interpreter links no crypto library; SHA-1 is used only for the
// handshake's accept key, never for anything that needs collision resistance.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace oishell::agent::server {

std::array<uint8_t, 20> sha1(std::string_view data);
std::string base64_encode(std::string_view bytes);
// Lower-case hex of `bytes`.
std::string hex_encode(std::string_view bytes);

}  // namespace oishell::agent::server
