#pragma once
// Lower-case hexadecimal: tokens (base/http/bearer_token.h) and digests.
#include <string>
#include <string_view>

namespace oishell {

// Two lower-case hex digits per byte of `bytes`.
std::string hex_encode(std::string_view bytes);

}  // namespace oishell
