// Request paths, path globs and method names for the HTTP rules of a `tls: terminate` host (policy/http_path.h).
// Pure functions: no syscalls.
#include "policy/http_path.h"
#include "policy/http_token.h"

#include <algorithm>

namespace oishell {
namespace {

constexpr size_t kMaxGlobStars = 64;
constexpr size_t kMaxMethodChars = 32;
constexpr size_t kMaxShownChars = 160;

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `text` for a message: in backquotes, cut short, bytes that are not printable ASCII as \xNN (a refused target
// holds exactly the bytes that should not reach a terminal or a log line raw).
std::string shown(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "`";
  for (size_t i = 0; i < text.size() && i < kMaxShownChars; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMaxShownChars) out += "...";
  return out + "`";
}

std::string escape_text(unsigned char c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  return std::string("%") + kHex[c >> 4] + kHex[c & 0xf];
}

// Why the escape-decoded byte `c` may not be in a path, or nullptr.
const char* refused_decoded_byte(unsigned char c) {
  if (c == '/') return "an encoded slash (servers differ on whether it separates segments)";
  if (c == '\\') return "an encoded backslash (some servers read it as `/`)";
  if (c == 0) return "an encoded NUL";
  if (is_control(c)) return "an encoded control character";
  return nullptr;
}

// Why the raw byte `c` may not be in a path, or nullptr.
const char* refused_raw_byte(unsigned char c) {
  if (c == '\\') return "a backslash (some servers read it as `/`)";
  if (c == ' ') return "a space";
  if (is_control(c)) return "a control character";
  if (c >= 0x80) return "a byte that is not ASCII (percent-encode it)";
  return nullptr;
}

// Bytes the `?` of a glob takes at `text[at]`: a UTF-8 lead byte with its continuation bytes, else one byte.
size_t character_length(std::string_view text, size_t at) {
  auto lead = static_cast<unsigned char>(text[at]);
  size_t max = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  size_t n = 1;
  while (n < max && at + n < text.size() && (static_cast<unsigned char>(text[at + n]) & 0xc0) == 0x80) ++n;
  return n;
}

// One glob segment against one path segment. The classic greedy matcher: on a mismatch only the latest `*` takes
// one more byte and the rest is retried, so at most O(pattern x text) steps (earlier `*`s never need revisiting:
// any run the latest one could need is a run it can take).
bool segment_matches(std::string_view pattern, std::string_view text) {
  size_t p = 0;
  size_t t = 0;
  size_t star_p = std::string_view::npos;
  size_t star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star_p = p++;
      star_t = t;
    } else if (p < pattern.size() && pattern[p] == '?') {
      t += character_length(text, t);
      ++p;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star_p != std::string_view::npos) {
      p = star_p + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

Result<std::string> decode_request_path(std::string_view target) {
  auto refuse = [&](std::string_view why) {
    return Status::error("request target " + shown(target) + ": " + std::string(why));
  };
  if (target.empty()) return refuse("empty");
  if (target == "*") return refuse("`*` (OPTIONS *) names the server, not a path a rule can allow");
  std::string_view rest = target;
  if (target.front() != '/') {
    size_t scheme_end = target.find("://");
    std::string_view scheme = target.substr(0, scheme_end);
    if (scheme_end == std::string_view::npos || !(iequals(scheme, "http") || iequals(scheme, "https"))) {
      return refuse("neither a path (`/...`) nor an http(s) URL");
    }
    rest = target.substr(scheme_end + 3);
    size_t path_start = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, path_start);
    if (authority.find('@') != std::string_view::npos) return refuse("userinfo (`user@`) in the URL is refused");
    if (authority.empty()) return refuse("no host in the URL");
    rest = path_start == std::string_view::npos ? std::string_view() : rest.substr(path_start);
  }
  std::string_view path = rest.substr(0, rest.find_first_of("?#"));
  if (path.size() > kMaxRequestPathBytes) {
    return refuse("path longer than " + std::to_string(kMaxRequestPathBytes) + " bytes");
  }
  if (path.empty()) return std::string("/");  // "https://host" and "https://host?q" ask for the root

  std::string decoded;
  decoded.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    auto c = static_cast<unsigned char>(path[i]);
    if (c != '%') {
      if (const char* why = refused_raw_byte(c)) return refuse(why);
      decoded.push_back(static_cast<char>(c));
      continue;
    }
    int high = i + 1 < path.size() ? hex_value(path[i + 1]) : -1;
    int low = i + 2 < path.size() ? hex_value(path[i + 2]) : -1;
    if (high < 0 || low < 0) return refuse("malformed percent-escape " + shown(path.substr(i, 3)));
    auto byte = static_cast<unsigned char>(high * 16 + low);
    if (const char* why = refused_decoded_byte(byte)) return refuse(std::string(why) + " `" + escape_text(byte) + "`");
    decoded.push_back(static_cast<char>(byte));  // decoded once: "%25" is a literal "%", never the start of an escape
    i += 2;
  }

  // Dot-segments after decoding (RFC 3986 5.2.4), on segments: "" (from "//") is kept until the end so that a ".."
  // popping it can be refused, then dropped (repeated slashes collapsed).
  std::vector<std::string_view> kept;
  bool trailing_slash = false;
  std::string_view all(decoded);
  size_t pos = 1;  // decoded starts with "/"
  while (true) {
    size_t slash = all.find('/', pos);
    bool last = slash == std::string_view::npos;
    std::string_view segment = all.substr(pos, last ? std::string_view::npos : slash - pos);
    std::string_view before_params = segment.substr(0, segment.find(';'));
    if (before_params.size() != segment.size() && (before_params == "." || before_params == "..")) {
      return refuse("dot-segment with `;` parameters " + shown(segment) +
                    " (some servers drop the parameters and go up a level)");
    }
    if (segment == "..") {
      if (!kept.empty() && kept.back().empty()) {
        return refuse("`..` after `//` (servers that merge slashes go up from a different segment)");
      }
      if (!kept.empty()) kept.pop_back();  // at the root, ".." stays there
    } else if (segment != ".") {
      kept.push_back(segment);
    }
    if (last) {
      trailing_slash = segment.empty() || segment == "." || segment == "..";
      break;
    }
    pos = slash + 1;
  }
  std::string out;
  out.reserve(decoded.size());
  for (std::string_view segment : kept) {
    if (segment.empty()) continue;
    out.append("/").append(segment);
  }
  if (out.empty() || trailing_slash) out.push_back('/');
  return out;
}

Result<PathGlob> PathGlob::parse(std::string_view glob) {
  auto bad = [&](std::string_view why) { return Status::error("path glob " + shown(glob) + ": " + std::string(why)); };
  if (glob.empty()) return bad("empty");
  if (glob.front() != '/') return bad("must start with `/`");
  for (char ch : glob) {
    auto c = static_cast<unsigned char>(ch);
    if (is_control(c)) return bad("control character");
    if (c == '%') return bad("`%`: globs are written decoded (`/a b`, not `/a%20b`)");
    if (c == '\\') return bad("`\\` never matches (a request path with one is refused)");
  }
  if (std::count(glob.begin(), glob.end(), '*') > static_cast<std::ptrdiff_t>(kMaxGlobStars)) {
    return bad("more than " + std::to_string(kMaxGlobStars) + " `*`");
  }
  PathGlob result;
  result.text_ = std::string(glob);
  if (glob == "/") return result;
  if (glob.back() == '/') {
    std::string without(glob.substr(0, glob.size() - 1));
    return bad("a trailing `/` is not significant (a request's is ignored): write `" + without + "`, or `" + without +
               "/**` for everything below it");
  }
  size_t pos = 1;
  while (pos <= glob.size()) {
    size_t slash = glob.find('/', pos);
    std::string_view segment = glob.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
    if (segment.empty()) return bad("empty segment (`//`): repeated slashes in a request are collapsed");
    if (segment == "." || segment == "..") return bad("`.` and `..` segments never match (a request's are resolved)");
    if (segment != "**" && segment.find("**") != std::string_view::npos) {
      return bad("`**` must be a whole segment (`/a/**`), not part of one");
    }
    // "/**/**" is "/**": one is kept, so the matcher never steps through a run of them.
    if (!(segment == "**" && !result.segments_.empty() && result.segments_.back() == "**")) {
      result.segments_.emplace_back(segment);
    }
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return result;
}

bool PathGlob::matches(std::string_view decoded_path) const {
  if (decoded_path.empty() || decoded_path.front() != '/') return false;
  std::vector<std::string_view> path;  // empty segments (a trailing slash) are not matched
  for (size_t pos = 1; pos <= decoded_path.size();) {
    size_t slash = decoded_path.find('/', pos);
    if (slash == std::string_view::npos) slash = decoded_path.size();
    if (slash > pos) path.push_back(decoded_path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  // The greedy matcher again, one level up: path segments are the characters, `**` the star, and each other glob
  // segment matches one path segment. On a mismatch only the latest `**` takes one more segment.
  size_t g = 0;
  size_t s = 0;
  size_t star_g = std::string_view::npos;
  size_t star_s = 0;
  while (s < path.size()) {
    if (g < segments_.size() && segments_[g] == "**") {
      star_g = g++;
      star_s = s;
    } else if (g < segments_.size() && segment_matches(segments_[g], path[s])) {
      ++g;
      ++s;
    } else if (star_g != std::string_view::npos) {
      g = star_g + 1;
      s = ++star_s;
    } else {
      return false;
    }
  }
  while (g < segments_.size() && segments_[g] == "**") ++g;
  return g == segments_.size();
}

Result<std::string> normalise_method(std::string_view method) {
  if (method.empty() || method.size() > kMaxMethodChars) {
    return Status::error("HTTP method " + shown(method) + ": not 1 to " + std::to_string(kMaxMethodChars) +
                         " characters");
  }
  if (!std::all_of(method.begin(), method.end(), is_tchar)) {
    return Status::error("HTTP method " + shown(method) + ": only token characters (letters, digits, " +
                         "!#$%&'*+-.^_`|~) are allowed");
  }
  std::string out(method);
  std::transform(out.begin(), out.end(), out.begin(), ascii_upper);
  return out;
}

}  // namespace oishell
