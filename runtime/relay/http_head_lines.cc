#include "runtime/relay/http_head_lines.h"

#include "policy/http_token.h"

namespace oishell::relay {
namespace {

bool is_ows(char c) { return c == ' ' || c == '\t'; }

// The head from its request line: the empty lines a client may send before it (RFC 9112 2.2; the parser's
// `consumed` counts them) would otherwise be taken for the request line, and the real one for a header.
std::string_view from_request_line(std::string_view head) {
  while (head.starts_with("\r\n")) head.remove_prefix(2);
  return head;
}

}  // namespace

std::string_view trim_ows(std::string_view text) {
  while (!text.empty() && is_ows(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_ows(text.back())) text.remove_suffix(1);
  return text;
}

std::optional<HeaderLine> parse_header_line(std::string_view line) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  HeaderLine h;
  h.line = line;
  h.name = line.substr(0, colon);
  h.value_begin = colon + 1;
  while (h.value_begin < line.size() && is_ows(line[h.value_begin])) ++h.value_begin;
  h.value_end = line.size();
  while (h.value_end > h.value_begin && is_ows(line[h.value_end - 1])) --h.value_end;
  h.value = line.substr(h.value_begin, h.value_end - h.value_begin);
  return h;
}

std::vector<HeaderLine> header_lines(std::string_view head) {
  head = from_request_line(head);
  std::vector<HeaderLine> lines;
  size_t at = head.find("\r\n");
  while (at != std::string_view::npos) {
    const size_t start = at + 2;
    const size_t end = head.find("\r\n", start);
    if (end == std::string_view::npos || end == start) break;
    if (auto line = parse_header_line(head.substr(start, end - start))) lines.push_back(*line);
    at = end;
  }
  return lines;
}

std::vector<std::string> header_tokens(std::string_view head, std::string_view header, std::string_view scheme) {
  std::vector<std::string> tokens;
  for (const HeaderLine& h : header_lines(head)) {
    if (!iequals(h.name, header)) continue;
    const std::string_view text = h.value;
    if (text.size() > scheme.size() && iequals(text.substr(0, scheme.size()), scheme) && is_ows(text[scheme.size()])) {
      const std::string_view token = trim_ows(text.substr(scheme.size()));
      if (!token.empty()) tokens.emplace_back(token);
    }
  }
  return tokens;
}

std::string with_identity_encoding(std::string_view head) {
  head = from_request_line(head);
  const size_t line_end = head.find("\r\n");
  if (line_end == std::string_view::npos) return std::string(head);
  std::string out(head.substr(0, line_end + 2));  // the request line
  size_t at = line_end + 2;
  while (at < head.size()) {
    const size_t end = head.find("\r\n", at);
    if (end == std::string_view::npos || end == at) break;  // the empty line ending the head
    auto line = parse_header_line(head.substr(at, end - at));
    if (!line || !iequals(line->name, "accept-encoding")) out.append(head.substr(at, end - at + 2));
    at = end + 2;
  }
  out += "Accept-Encoding: identity\r\n\r\n";
  return out;
}

}  // namespace oishell::relay
