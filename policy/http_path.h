#pragma once
// HTTP request paths and methods as the rules of a `tls: terminate` host see them (issue 16): the one decoded path a
// request target stands for, globs over such paths, and method names. Pure functions: the relay calls them on each
// request it has decrypted, the policy validator on each rule.
//
// A request a server could read two ways (an encoded slash, a backslash, `//..`, Tomcat's `..;`) is refused rather
// than guessed at: a rule decides on one reading, and the server must not act on another.
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace oishell {

// Longest path (before percent-decoding, query excluded) a request may have.
inline constexpr size_t kMaxRequestPathBytes = 8 * 1024;

// The path a request target stands for, from origin-form ("/repos/a/b?x=1") or absolute-form ("https://host/p?q";
// http and https only; userinfo "u@host" is refused: nothing legitimate sends it to a proxy or origin, and it hides
// the host from a reader). Steps:
//   - the query and fragment are dropped;
//   - raw control characters, spaces, backslashes and non-ASCII bytes are refused (RFC 3986 has none of them, and
//     servers disagree on what they mean);
//   - %XY escapes (either case) are decoded once ("%252F" is the literal text "%2F"); a malformed escape, and an
//     escape for "/", "\", NUL or any other control character is refused;
//   - dot-segments are removed after decoding (RFC 3986 5.2.4: "/repos/%2e%2e/admin" is "/admin"; never above
//     "/"), repeated slashes are collapsed, a trailing slash is kept;
//   - refused as ambiguous: a ".." right after an empty segment ("/a//../b": "/b" for a server that merges slashes,
//     "/a/b" for one that does not) and a segment that is "." or ".." before a ";" ("/a/..;/b": Tomcat's path
//     parameters make it "/b").
// The result starts with "/". "*" (OPTIONS *) is refused: it names the server, not a resource, so no path rule can
// allow it, and a client of an API never needs it. Also refused: authority-form ("host:443") and a path longer than
// kMaxRequestPathBytes.
Result<std::string> decode_request_path(std::string_view target);

// A glob over decoded paths (as decode_request_path returns them), from a policy rule's `paths`:
//   `*`   any characters within one segment (never "/"), also none;
//   `**`  as a whole segment: zero or more segments ("/repos/**" matches "/repos", "/repos/", "/repos/a/b/c";
//         "/a/**/z" matches "/a/z" and "/a/b/c/z");
//   `?`   one character other than "/" (a UTF-8 sequence counts as one);
//   anything else is literal and case-sensitive (there are no classes: "[" is a bracket).
// A trailing slash is not significant: a path's is ignored when matching ("/a/b/" is matched as "/a/b", the same
// resource on nearly every server), and a glob ending in "/" is refused rather than read as "the directory and
// below" (that is "/a/**"). Matching takes O(glob x path) steps at worst, never exponential.
class PathGlob {
 public:
  // Refuses: empty, not starting with "/", "**" inside a segment ("/a**"), an empty, "." or ".." segment (they
  // never match a decoded path), a trailing "/" (other than "/" itself), control characters, "\", "%" (globs are
  // written decoded), more than 64 `*`.
  static Result<PathGlob> parse(std::string_view glob);
  // `decoded_path` as decode_request_path returns it (a path not starting with "/" matches nothing).
  bool matches(std::string_view decoded_path) const;
  const std::string& text() const { return text_; }
  bool operator==(const PathGlob& other) const { return text_ == other.text_; }

 private:
  std::string text_;
  std::vector<std::string> segments_;  // between the slashes; "**" stands for any number of segments
};

// A method name from a rule or a request: RFC 9110 token characters, 1..32 of them, upper-cased ("get" -> "GET").
// Methods are case-sensitive on the wire (RFC 9110 9.1); upper-casing both the rule's and the request's means a
// rule for GET also admits "get", which a server either treats as GET or refuses: never more than GET.
Result<std::string> normalise_method(std::string_view method);

}  // namespace oishell
