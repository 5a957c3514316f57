#include "agent/core/partial_json.h"

#include <set>
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
        if (cp >= 0xD800 && cp <= 0xDBFF && pos + 6 > s.size()) {
          // A high surrogate whose low half may still be coming (the text ends before a whole `\uXXXX`): stop
          // before it, as for a cut-off escape. Shown now as a lone surrogate, it would not be a prefix of the
          // character the pair decodes to once complete, and the streamed display (agent/core/loop.cc shows what is
          // new past what it showed) would differ from the code that runs.
          const std::string_view tail = s.substr(pos);
          if (tail.empty() || (tail[0] == '\\' && (tail.size() == 1 || tail[1] == 'u'))) return out;
        }
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

// Calls on_key(depth, key_at, value_at) for each object key of the JSON value at the start of `text` (after white
// space), in order: depth 1 is the top-level object, key_at the position of the key's opening quote, value_at where
// its value starts (after the colon and white space; text.size() when the text ends first). Stops when on_key
// returns false, when the value ends, or where the text does (it may be cut off). Strings may hold raw control
// characters (models write them); anything else unexpected is stepped over, as the repair in lenient_json_parse
// does.
template <typename OnKey>
void scan_keys(std::string_view text, OnKey on_key) {
  std::vector<char> open;  // '{' or '[' for each container we are in
  bool expect_key = false;
  size_t pos = 0;
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos >= text.size() || (text[pos] != '{' && text[pos] != '[')) return;
  while (pos < text.size()) {
    char c = text[pos];
    if (c == '"') {
      size_t end = pos + 1;
      while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
      if (end >= text.size()) return;  // cut off inside the string
      size_t after = end + 1;
      while (after < text.size() && std::isspace(static_cast<unsigned char>(text[after]))) ++after;
      if (expect_key && !open.empty() && open.back() == '{' && after < text.size() && text[after] == ':') {
        size_t value_at = after + 1;
        while (value_at < text.size() && std::isspace(static_cast<unsigned char>(text[value_at]))) ++value_at;
        if (!on_key(static_cast<int>(open.size()), pos, value_at)) return;
        expect_key = false;
        pos = value_at;
        continue;
      }
      pos = end + 1;
      continue;
    }
    if (c == '{' || c == '[') {
      open.push_back(c);
      expect_key = c == '{';
    } else if (c == '}' || c == ']') {
      if (!open.empty()) open.pop_back();
      if (open.empty()) return;  // the value is complete; what follows is not part of it
      expect_key = false;
    } else if (c == ',') {
      expect_key = !open.empty() && open.back() == '{';
    }
    ++pos;
  }
}

// Rewrites broken JSON so that a strict parser reads it: raw control characters inside strings escaped, the text
// after the top-level value dropped (*rest says where it starts), whatever is still open closed. With
// `skip_prose`, text before the first `{` or `[` is skipped; without it, text that does not start with one (after
// white space) gives nullopt.
std::optional<std::string> repair_json(std::string_view text, bool skip_prose, size_t* rest) {
  std::string fixed;
  std::vector<char> open;
  bool in_string = false, escaped = false, started = false;
  *rest = text.size();
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (!started) {
      if (c != '{' && c != '[') {
        if (skip_prose || std::isspace(static_cast<unsigned char>(c))) continue;  // prose (or space) before it
        return std::nullopt;
      }
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
      if (open.empty()) {  // the top-level value is complete
        *rest = i + 1;
        break;
      }
    }
  }
  if (!started) return std::nullopt;
  if (escaped) fixed.pop_back();
  if (in_string) fixed.push_back('"');
  while (!open.empty()) {
    fixed.push_back(open.back());
    open.pop_back();
  }
  return fixed;
}

// Parses strict JSON and names the first key that repeats within one object, at any depth (after unescaping, as
// the parser compares keys). nlohmann keeps the last of the repeats without a word, so the parser callback is where
// they can be seen.
nlohmann::json parse_noting_repeats(std::string_view text, std::string* repeated) {
  std::vector<std::set<std::string>> keys;  // of each object being read
  auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) {
      keys.emplace_back();
    } else if (event == E::object_end) {
      if (!keys.empty()) keys.pop_back();
    } else if (event == E::key && !keys.empty() && parsed.is_string()) {
      if (!keys.back().insert(parsed.get<std::string>()).second && repeated->empty()) {
        *repeated = parsed.get<std::string>();
      }
    }
    return true;
  };
  return nlohmann::json::parse(text, callback, /*allow_exceptions=*/false);
}

}  // namespace

std::optional<std::string> partial_json_string(std::string_view text, std::string_view key) {
  std::optional<std::string> value;
  scan_keys(text, [&](int depth, size_t key_at, size_t value_at) {
    if (depth != 1 || decode_string(text, key_at + 1) != key) return true;
    if (value_at < text.size() && text[value_at] == '"') value = decode_string(text, value_at + 1);
    return false;  // the first top-level one: a repeat makes the call refused (parse_call_arguments)
  });
  return value;
}

std::optional<nlohmann::json> lenient_json_parse(std::string_view text) {
  auto direct = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!direct.is_discarded()) return direct;
  size_t rest = 0;
  auto fixed = repair_json(text, /*skip_prose=*/true, &rest);
  if (!fixed) return std::nullopt;
  auto repaired = nlohmann::json::parse(*fixed, nullptr, /*allow_exceptions=*/false);
  if (repaired.is_discarded()) return std::nullopt;
  return repaired;
}

CallArguments parse_call_arguments(std::string_view text) {
  CallArguments out;
  std::string repeated;
  auto value = parse_noting_repeats(text, &repeated);
  if (value.is_discarded()) {
    size_t rest = 0;
    auto fixed = repair_json(text, /*skip_prose=*/false, &rest);
    if (!fixed) return out;  // not JSON at all
    std::string_view after = text.substr(rest);
    if (after.find_first_not_of(" \t\r\n}]") != std::string_view::npos) {
      out.problem = "more text follows the JSON object of the arguments";
      return out;
    }
    repeated.clear();
    value = parse_noting_repeats(*fixed, &repeated);
    if (value.is_discarded()) return out;
    out.repaired = true;
  }
  if (!repeated.empty()) {
    out.problem = "the key `" + repeated + "` appears twice in one object of the arguments";
    return out;
  }
  scan_keys(text, [&](int, size_t key_at, size_t) {
    size_t end = key_at + 1;
    while (end < text.size() && text[end] != '"') {
      if (text[end] == '\\') {
        out.problem = "the key `" + decode_string(text, key_at + 1) +
                      "` is written with escape sequences; write each key plainly";
        return false;
      }
      ++end;
    }
    return true;
  });
  if (!out.problem.empty()) return out;
  out.value = std::move(value);
  return out;
}

}  // namespace oishell::agent
