#pragma once
// What the websocket handshake needs (RFC 6455 section 4.2.2) besides base64 (base/base64.h): SHA-1 (FIPS 180-4).
// Pure functions, written here so the interpreter links no crypto library; SHA-1 is used only for the handshake's
// accept key, never for anything that needs collision resistance.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/base64.h"
#include "base/hex.h"

namespace oishell::agent::server {

std::array<uint8_t, 20> sha1(std::string_view data);
using ::oishell::hex_encode;

}  // namespace oishell::agent::server
