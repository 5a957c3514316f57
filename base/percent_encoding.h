#pragma once
// Percent-encoding (RFC 3986 §2.1), decoded: URL queries (the web UI's token), file:// paths (prompt images),
// request targets (the relay's credential rules). A malformed escape stays as it is.
#include <string>
#include <string_view>

namespace oishell {

// 0-15 for a hexadecimal digit, else -1.
int hex_digit_value(char c);

// `text` with each %XY decoded once; with `plus_is_space` (a form-encoded query), '+' is a space.
std::string percent_decoded(std::string_view text, bool plus_is_space = false);

}  // namespace oishell
