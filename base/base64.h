#pragma once
// Base64 (RFC 4648 section 4, the standard alphabet): the Basic credentials the relay rewrites and redacts
// (runtime/relay/credential_rewrite.h), the websocket handshake and the images of the agent. Pure functions.
#include <optional>
#include <string>
#include <string_view>

namespace oishell {

// Padded to a multiple of 4.
std::string base64_encode(std::string_view bytes);

// The bytes `text` encodes, or nullopt when it is not base64: a character outside the alphabet, "=" anywhere but
// at the end, or a length no encoding has. Missing padding and stray bits after the last byte are accepted, as
// lenient servers accept them: what a server could decode, the relay should see.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace oishell
