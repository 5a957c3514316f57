#pragma once
// The header lines of a request head as the relay's terminator reads and edits them, in place (views into the head,
// nothing decoded): one walker for the credential rewrite (runtime/relay/credential_rewrite.h) and the terminator
// (runtime/relay/https_terminator.h). The head was checked by the parser (runtime/relay/http_parser.h) first.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oishell::relay {

// "Name: value" as sent: the name before the colon, the value without the optional whitespace around it, and
// where that value starts and ends in the line (what a rewrite keeps around it).
struct HeaderLine {
  std::string_view line;
  std::string_view name;
  std::string_view value;
  size_t value_begin = 0;
  size_t value_end = 0;
};

// `text` without the spaces and tabs around it.
std::string_view trim_ows(std::string_view text);

// One header line split; nullopt when it has no colon.
std::optional<HeaderLine> parse_header_line(std::string_view line);

// The header lines of `head` (CRLF-separated, the request line first, up to the empty line that ends it); lines
// without a colon are left out. Empty lines before the request line are skipped (as the parser skips them): without
// that, the first of them was taken for the request line and the next for the end of the head, and no header was
// seen at all (found by tests/fuzz/relay_http_request).
std::vector<HeaderLine> header_lines(std::string_view head);

// The credentials after `scheme` in each `header` of `head` ("Basic dXNlcjpwYXNz" gives "dXNlcjpwYXNz"); header
// and scheme compared without case, the scheme followed by a space or a tab.
std::vector<std::string> header_tokens(std::string_view head, std::string_view header, std::string_view scheme);

// `head` asking for the response as it is: every Accept-Encoding line replaced by `Accept-Encoding: identity`
// (empty lines before the request line dropped).
std::string with_identity_encoding(std::string_view head);

}  // namespace oishell::relay
