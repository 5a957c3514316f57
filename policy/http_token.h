#pragma once
// The few character rules of HTTP (RFC 9110) that the policy and the relay both apply: token characters and
// ASCII case-insensitive comparison (header names, methods, schemes).
#include <algorithm>
#include <string_view>

namespace oishell {

inline char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
inline char ascii_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

// RFC 9110 5.6.2 tchar.
inline bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// A token: one or more tchar.
inline bool is_token(std::string_view text) { return !text.empty() && std::all_of(text.begin(), text.end(), is_tchar); }

}  // namespace oishell
