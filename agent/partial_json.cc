#include "agent/partial_json.h"

#include <vector>

namespace oishell::agent {
namespace {

// The value of 4 hex digits at `pos`, or -1.
int hex4(std::string_view s, size_t pos) {
  if (pos + 4 > s.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + 4; ++i) {
    char c = s[i];
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// Decodes a JSON string body starting right after its opening quote; stops at the closing quote or where the
// text ends (an incomplete escape at the end is dropped).
std::string decode_string(std::string_view s, size_t pos) {
  std::string out;
  while (pos < s.size()) {
    char c = s[pos];
    if (c == '"') break;
    if (c != '\\') {
      out.push_back(c);
      ++pos;
      continue;
    }
    if (pos + 1 >= s.size()) break;
    char e = s[pos + 1];
    switch (e) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'u': {
        int hi = hex4(s, pos + 2);
        if (hi < 0) return out;  // cut off (or broken) escape: stop here
        unsigned cp = static_cast<unsigned>(hi);
        pos += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF && pos + 6 <= s.size() && s[pos] == '\\' && s[pos + 1] == 'u') {
          int lo = hex4(s, pos + 2);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<unsigned>(lo) - 0xDC00);
            pos += 6;
          }
        }
        if (cp < 0x80) {
          out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
          out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
          out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
          out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
        continue;
      }
      default: out.push_back(e); break;  // \" \\ \/ and anything else verbatim
    }
    pos += 2;
  }
  return out;
}

}  // namespace

std::optional<std::string> partial_json_string(std::string_view text, std::string_view key) {
  std::string needle = "\"" + std::string(key) + "\"";
  size_t at = 0;
  while ((at = text.find(needle, at)) != std::string_view::npos) {
    size_t pos = at + needle.size();
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos >= text.size()) return std::nullopt;
    if (text[pos] != ':') {
      at = pos;
      continue;
    }
    ++pos;
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos >= text.size() || text[pos] != '"') return std::nullopt;
    return decode_string(text, pos + 1);
  }
  return std::nullopt;
}

std::optional<nlohmann::json> lenient_json_parse(std::string_view text) {
  auto direct = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!direct.is_discarded()) return direct;
  // Rewrite: escape raw control characters inside strings, stop after the top-level value closes, then close
  // whatever is still open.
  std::string fixed;
  std::vector<char> open;
  bool in_string = false, escaped = false, started = false;
  for (char c : text) {
    if (!started) {
      if (c != '{' && c != '[') continue;  // prose before the value
      started = true;
    }
    if (in_string) {
      if (escaped) {
        escaped = false;
        fixed.push_back(c);
      } else if (c == '\\') {
        escaped = true;
        fixed.push_back(c);
      } else if (c == '"') {
        in_string = false;
        fixed.push_back(c);
      } else if (c == '\n') {
        fixed += "\\n";
      } else if (c == '\t') {
        fixed += "\\t";
      } else if (c == '\r') {
        fixed += "\\r";
      } else {
        fixed.push_back(c);
      }
      continue;
    }
    fixed.push_back(c);
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (!open.empty()) open.pop_back();
      if (open.empty()) break;  // the top-level value is complete; ignore what follows
    }
  }
  if (!started) return std::nullopt;
  if (escaped) fixed.pop_back();
  if (in_string) fixed.push_back('"');
  while (!open.empty()) {
    fixed.push_back(open.back());
    open.pop_back();
  }
  auto repaired = nlohmann::json::parse(fixed, nullptr, /*allow_exceptions=*/false);
  if (repaired.is_discarded()) return std::nullopt;
  return repaired;
}

}  // namespace oishell::agent
