// Unit tests for policy/http_path.h: the path a request target stands for (decoding, dot-segments, the requests
// refused as ambiguous), path globs and method names.
#include "policy/http_path.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

namespace oishell {
namespace {

std::string path(std::string_view target) {
  auto r = decode_request_path(target);
  EXPECT_TRUE(r.is_ok()) << target << ": " << (r.is_ok() ? "" : r.status().message());
  return r.is_ok() ? *r : std::string("<error>");
}

std::string path_error(std::string_view target) {
  auto r = decode_request_path(target);
  EXPECT_FALSE(r.is_ok()) << target << " decoded to " << (r.is_ok() ? *r : "") << " but should be refused";
  return r.is_ok() ? std::string() : r.status().message();
}

PathGlob glob(std::string_view text) {
  auto r = PathGlob::parse(text);
  EXPECT_TRUE(r.is_ok()) << text << ": " << (r.is_ok() ? "" : r.status().message());
  return r.is_ok() ? *r : PathGlob{};
}

std::string glob_error(std::string_view text) {
  auto r = PathGlob::parse(text);
  EXPECT_FALSE(r.is_ok()) << text << " parsed but should not";
  return r.is_ok() ? std::string() : r.status().message();
}

TEST(HttpPathDecode, OriginFormDropsQueryAndFragment) {
  EXPECT_EQ("/repos/a/b", path("/repos/a/b?x=1"));
  EXPECT_EQ("/repos/a/b", path("/repos/a/b#frag"));
  EXPECT_EQ("/p", path("/p?q=/../x"));
  EXPECT_EQ("/p", path("/p?a#b"));
  EXPECT_EQ("/", path("/"));
  EXPECT_EQ("/", path("/?x"));
  // What follows "?" is not checked: a backslash or "%2F" in the query is the application's business.
  EXPECT_EQ("/search", path("/search?q=a%2Fb\\c%G1"));
}

TEST(HttpPathDecode, AbsoluteForm) {
  EXPECT_EQ("/p", path("https://host/p?q"));
  EXPECT_EQ("/p", path("http://host:8080/p"));
  EXPECT_EQ("/a/b", path("HTTPS://Host.Example/a/b"));
  EXPECT_EQ("/", path("https://host"));
  EXPECT_EQ("/", path("https://host?q=1"));
  EXPECT_EQ("/", path("https://host#f"));
  EXPECT_EQ("/admin", path("https://host/repos/%2e%2e/admin"));
}

TEST(HttpPathDecode, AbsoluteFormRefused) {
  EXPECT_NE(std::string::npos, path_error("https://u@h/p").find("userinfo"));
  path_error("https://u:pw@h/p");
  path_error("https://@h/p");
  EXPECT_NE(std::string::npos, path_error("https:///p").find("no host"));
  EXPECT_NE(std::string::npos, path_error("ftp://h/p").find("neither a path"));
  path_error("host:443");  // authority-form (CONNECT)
  path_error("p/q");
}

TEST(HttpPathDecode, OptionsStarAndEmptyRefused) {
  EXPECT_NE(std::string::npos, path_error("*").find("OPTIONS *"));
  EXPECT_NE(std::string::npos, path_error("").find("empty"));
}

TEST(HttpPathDecode, PercentDecoding) {
  EXPECT_EQ("/a b", path("/a%20b"));
  EXPECT_EQ("/a:b", path("/a%3Ab"));
  EXPECT_EQ("/a:b", path("/a%3ab"));
  EXPECT_EQ("/~user", path("/%7Euser"));
  EXPECT_EQ("/a?b", path("/a%3Fb"));  // an encoded "?" is part of the path, not a query
  EXPECT_EQ("/a#b", path("/a%23b"));
  EXPECT_EQ("/a;b", path("/a;b"));
}

TEST(HttpPathDecode, DecodesOnceOnly) {
  EXPECT_EQ("/a%2F", path("/a%252F"));  // "%25" is "%"; the "%2F" that makes is literal text, not a slash
  EXPECT_EQ("/a%2e%2e/b", path("/a%252e%252e/b"));
  EXPECT_EQ("/100%", path("/100%25"));
}

TEST(HttpPathDecode, Utf8EscapesKeptAsBytes) {
  EXPECT_EQ("/caf\xc3\xa9", path("/caf%C3%A9"));
  EXPECT_EQ("/caf\xc3\xa9", path("/caf%c3%a9"));
  EXPECT_EQ("/\xff", path("/%FF"));  // not UTF-8, still a byte a rule can match with `?` or `*`
}

TEST(HttpPathDecode, MalformedEscapesRefused) {
  EXPECT_NE(std::string::npos, path_error("/a%G1").find("malformed percent-escape"));
  path_error("/a%4");
  path_error("/a%");
  path_error("/a%%41");
  path_error("/a%1G/b");
}

TEST(HttpPathDecode, AmbiguousEscapesRefused) {
  EXPECT_NE(std::string::npos, path_error("/a%2Fb").find("encoded slash"));
  EXPECT_NE(std::string::npos, path_error("/a%2fb").find("encoded slash"));
  EXPECT_NE(std::string::npos, path_error("/a%5Cb").find("encoded backslash"));
  path_error("/a%5cb");
  EXPECT_NE(std::string::npos, path_error("/a%00").find("encoded NUL"));
  EXPECT_NE(std::string::npos, path_error("/a%0D%0Ab").find("encoded control character"));
  path_error("/a%09");
  path_error("/a%7F");
  path_error("/%2e%2e%2f");
}

TEST(HttpPathDecode, RawCharactersRefused) {
  EXPECT_NE(std::string::npos, path_error("/a\\b").find("backslash"));
  EXPECT_NE(std::string::npos, path_error(std::string_view("/a\0b", 4)).find("control character"));
  path_error("/a\tb");
  path_error("/a\x7f");
  path_error("/a b");
  EXPECT_NE(std::string::npos, path_error("/caf\xc3\xa9").find("not ASCII"));
}

TEST(HttpPathDecode, MessagesShowRefusedBytesEscaped) {
  std::string message = path_error("/a\r\nX-Injected: 1");
  EXPECT_EQ(std::string::npos, message.find('\r'));
  EXPECT_EQ(std::string::npos, message.find('\n'));
  EXPECT_NE(std::string::npos, message.find("\\x0d\\x0a"));
}

TEST(HttpPathDecode, DotSegmentsRemovedAfterDecoding) {
  EXPECT_EQ("/admin", path("/repos/%2e%2e/admin"));
  EXPECT_EQ("/admin", path("/repos/../admin"));
  EXPECT_EQ("/admin", path("/repos/%2E%2E/admin"));
  EXPECT_EQ("/admin", path("/repos/.%2e/admin"));
  EXPECT_EQ("/repos/admin", path("/repos/%2e/admin"));
  EXPECT_EQ("/repos/admin", path("/repos/./admin"));
  EXPECT_EQ("/c", path("/a/b/../../../c"));  // never above the root
  EXPECT_EQ("/c", path("/../c"));
  EXPECT_EQ("/a/c", path("/a/b/../c"));
  EXPECT_EQ("/a/...", path("/a/..."));  // three dots are a name
  EXPECT_EQ("/a/..b", path("/a/..b"));
}

TEST(HttpPathDecode, TrailingSlashKept) {
  EXPECT_EQ("/a/", path("/a/"));
  EXPECT_EQ("/a/b/", path("/a/b/?x"));
  EXPECT_EQ("/a/", path("/a/."));
  EXPECT_EQ("/a/", path("/a/b/.."));
  EXPECT_EQ("/", path("/a/.."));
  EXPECT_EQ("/", path("/.."));
  EXPECT_EQ("/", path("/."));
  EXPECT_EQ("/a", path("/a"));
}

TEST(HttpPathDecode, RepeatedSlashesCollapsed) {
  EXPECT_EQ("/a", path("//a"));
  EXPECT_EQ("/a/b", path("/a//b"));
  EXPECT_EQ("/a/b/", path("/a///b//"));
  EXPECT_EQ("/", path("//"));
  EXPECT_EQ("/a/b", path("/a//./b"));      // "." after "//": both readings agree
  EXPECT_EQ("/a/", path("/a//b/.."));      // ".." pops "b" either way
  EXPECT_EQ("/a", path("https://h//a"));
}

TEST(HttpPathDecode, DotDotAfterEmptySegmentRefused) {
  // A server that merges slashes reads "/a//../b" as "/b", one that does not as "/a/b".
  EXPECT_NE(std::string::npos, path_error("/a//../b").find("`..` after `//`"));
  path_error("/a//%2e%2e/b");
  path_error("/a/.//../b");
  path_error("//../a");
}

TEST(HttpPathDecode, DotSegmentWithParametersRefused) {
  // Tomcat drops ";..." path parameters first: "/a/..;/b" is "/b" to it, a segment under /a to everyone else.
  EXPECT_NE(std::string::npos, path_error("/repos/..;/admin").find("`;` parameters"));
  path_error("/repos/..;x=1/admin");
  path_error("/repos/.;/admin");
  path_error("/repos/%2e%2e;/admin");
  path_error("/repos/..%3B/admin");
  EXPECT_EQ("/repos/a;v=1/b", path("/repos/a;v=1/b"));
  EXPECT_EQ("/repos/...;x", path("/repos/...;x"));
}

TEST(HttpPathDecode, LengthLimit) {
  std::string longest = "/" + std::string(kMaxRequestPathBytes - 1, 'a');
  EXPECT_EQ(longest, path(longest));
  EXPECT_NE(std::string::npos, path_error(longest + "a").find("longer than 8192 bytes"));
  // The query does not count.
  EXPECT_EQ(longest, path(longest + "?" + std::string(20000, 'q')));
  // Escapes count as written: 8193 bytes that decode to fewer are still too long.
  path_error("/" + std::string(kMaxRequestPathBytes - 3, 'a') + "%41");
  path("/" + std::string(kMaxRequestPathBytes - 4, 'a') + "%41");
}

TEST(HttpPathGlobParse, Accepted) {
  EXPECT_EQ("/repos/**", glob("/repos/**").text());
  glob("/");
  glob("/**");
  glob("/a/*/b");
  glob("/a/*.json");
  glob("/a/v?");
  glob("/a b/[x]");
  glob("/caf\xc3\xa9");
  std::string many_stars;  // 64 `*`, the most a glob may have
  for (int i = 0; i < 32; ++i) many_stars += "*a";
  glob("/" + many_stars + "/" + many_stars);
}

TEST(HttpPathGlobParse, Refused) {
  EXPECT_NE(std::string::npos, glob_error("").find("empty"));
  EXPECT_NE(std::string::npos, glob_error("repos/**").find("must start with `/`"));
  EXPECT_NE(std::string::npos, glob_error("*").find("must start with `/`"));
  EXPECT_NE(std::string::npos, glob_error("/a**").find("whole segment"));
  glob_error("/**a");
  glob_error("/a/***");
  glob_error("/a/**b/c");
  EXPECT_NE(std::string::npos, glob_error("/a\tb").find("control character"));
  glob_error(std::string_view("/a\0", 3));
  glob_error("/a\x7f");
  EXPECT_NE(std::string::npos, glob_error("/a%20b").find("decoded"));
  glob_error("/a%2F");
  glob_error("/a\\b");
  std::string stars;
  for (int i = 0; i < 65; ++i) stars += "/*";
  EXPECT_NE(std::string::npos, glob_error(stars).find("more than 64"));
  glob_error("/" + std::string(65, '*'));
  EXPECT_NE(std::string::npos, glob_error("/repos/").find("`/repos/**`"));
  EXPECT_NE(std::string::npos, glob_error("//a").find("empty segment"));
  glob_error("/a//b");
  glob_error("/a/../b");
  glob_error("/a/./b");
}

TEST(HttpPathGlobMatch, Literal) {
  PathGlob g = glob("/repos/a/b");
  EXPECT_TRUE(g.matches("/repos/a/b"));
  EXPECT_TRUE(g.matches("/repos/a/b/"));  // a trailing slash is not significant
  EXPECT_FALSE(g.matches("/repos/a"));
  EXPECT_FALSE(g.matches("/repos/a/b/c"));
  EXPECT_FALSE(g.matches("/Repos/a/b"));  // case-sensitive
  EXPECT_FALSE(g.matches("/repos/a/bc"));
  EXPECT_FALSE(g.matches("repos/a/b"));
  EXPECT_FALSE(g.matches(""));
  EXPECT_TRUE(glob("/").matches("/"));
  EXPECT_FALSE(glob("/").matches("/a"));
  EXPECT_TRUE(glob("/a b/[x]").matches("/a b/[x]"));
  EXPECT_FALSE(glob("/a b/[x]").matches("/a b/x"));
}

TEST(HttpPathGlobMatch, StarStaysWithinASegment) {
  PathGlob g = glob("/repos/*/issues");
  EXPECT_TRUE(g.matches("/repos/a/issues"));
  EXPECT_TRUE(g.matches("/repos/some-repo.git/issues"));
  EXPECT_FALSE(g.matches("/repos/a/b/issues"));
  EXPECT_FALSE(g.matches("/repos/issues"));
  PathGlob json = glob("/a/*.json");
  EXPECT_TRUE(json.matches("/a/x.json"));
  EXPECT_TRUE(json.matches("/a/.json"));
  EXPECT_TRUE(json.matches("/a/x.json.json"));
  EXPECT_FALSE(json.matches("/a/x.json/y"));
  EXPECT_FALSE(json.matches("/a/b/x.json"));
  EXPECT_FALSE(json.matches("/a/x.jsonx"));
  PathGlob mid = glob("/a/x*y*z");
  EXPECT_TRUE(mid.matches("/a/xyz"));
  EXPECT_TRUE(mid.matches("/a/x--y--y--z"));
  EXPECT_FALSE(mid.matches("/a/x--z--y"));
  EXPECT_TRUE(glob("/*").matches("/anything"));
  EXPECT_FALSE(glob("/*").matches("/"));
  EXPECT_FALSE(glob("/*").matches("/a/b"));
}

TEST(HttpPathGlobMatch, DoubleStarSpansSegments) {
  PathGlob g = glob("/repos/**");
  EXPECT_TRUE(g.matches("/repos"));
  EXPECT_TRUE(g.matches("/repos/"));
  EXPECT_TRUE(g.matches("/repos/a"));
  EXPECT_TRUE(g.matches("/repos/a/b/c"));
  EXPECT_FALSE(g.matches("/reposx"));
  EXPECT_FALSE(g.matches("/repo"));
  EXPECT_FALSE(g.matches("/other/repos/a"));
  PathGlob az = glob("/a/**/z");
  EXPECT_TRUE(az.matches("/a/z"));
  EXPECT_TRUE(az.matches("/a/b/z"));
  EXPECT_TRUE(az.matches("/a/b/c/z"));
  EXPECT_TRUE(az.matches("/a/z/z"));
  EXPECT_FALSE(az.matches("/a/z/b"));
  EXPECT_FALSE(az.matches("/a"));
  EXPECT_FALSE(az.matches("/b/z"));
  PathGlob all = glob("/**");
  EXPECT_TRUE(all.matches("/"));
  EXPECT_TRUE(all.matches("/x/y"));
  PathGlob lead = glob("/**/issues/*");
  EXPECT_TRUE(lead.matches("/issues/1"));
  EXPECT_TRUE(lead.matches("/repos/a/b/issues/1"));
  EXPECT_FALSE(lead.matches("/repos/a/b/issues"));
  EXPECT_FALSE(lead.matches("/repos/a/b/issues/1/comments"));
  PathGlob twice = glob("/a/**/b/**/c");
  EXPECT_TRUE(twice.matches("/a/b/c"));
  EXPECT_TRUE(twice.matches("/a/x/b/y/b/z/c"));
  EXPECT_FALSE(twice.matches("/a/c/b"));
}

TEST(HttpPathGlobMatch, QuestionMarkIsOneCharacter) {
  PathGlob g = glob("/v?/users");
  EXPECT_TRUE(g.matches("/v1/users"));
  EXPECT_TRUE(g.matches("/v\xc3\xa9/users"));  // one UTF-8 character, two bytes
  EXPECT_FALSE(g.matches("/v/users"));
  EXPECT_FALSE(g.matches("/v12/users"));
  EXPECT_FALSE(glob("/a?b").matches("/a/b"));
  EXPECT_TRUE(glob("/a?b").matches("/a?b"));  // a decoded "%3F"
  EXPECT_TRUE(glob("/\xff").matches("/\xff"));
  EXPECT_TRUE(glob("/?").matches("/\xff"));
}

TEST(HttpPathGlobMatch, DecodedPathsFromTargets) {
  PathGlob repos = glob("/repos/**");
  EXPECT_FALSE(repos.matches(path("/repos/%2e%2e/admin")));
  EXPECT_FALSE(repos.matches(path("/repos/a/../../admin")));
  EXPECT_TRUE(repos.matches(path("/repos/a/./b/../c?x=/../..")));
  EXPECT_TRUE(glob("/a*2F").matches(path("/a%252F")));  // decoded once: the "%" is literal text
  EXPECT_FALSE(glob("/a/**").matches(path("/a%252F")));
  EXPECT_TRUE(glob("/caf\xc3\xa9/*").matches(path("/caf%C3%A9/x")));
}

TEST(HttpPathGlobMatch, PathologicalGlobIsFast) {
  std::string long_path;
  for (int i = 0; i < 200; ++i) long_path += "/a";
  std::string star_path;
  for (int i = 0; i < 200; ++i) star_path += "/" + std::string(40, 'a');
  auto start = std::chrono::steady_clock::now();
  // Would take exponential time with naive backtracking: every `**` can take any number of the 200 segments.
  EXPECT_FALSE(glob("/**/**/**/**/**/x").matches(long_path));
  EXPECT_FALSE(glob("/**/a/**/a/**/a/**/a/**/a/**/x").matches(long_path));
  EXPECT_TRUE(glob("/**/a/**/a/**/a/**/a/**/a/**/a").matches(long_path));
  EXPECT_FALSE(glob("/**/*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b").matches(star_path));
  EXPECT_FALSE(glob("/**/*a*/**/*a*a*a*a*b/**/*a*a*/**/x").matches(star_path));
  EXPECT_TRUE(glob("/**/*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a").matches(star_path));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(2));  // backtracking would take longer than anyone waits; linear: ~1 ms
}

// The definition, written the slow way: every split tried.
bool naive_segment(std::string_view p, std::string_view t) {
  if (p.empty()) return t.empty();
  if (p[0] == '*') {
    for (size_t i = 0; i <= t.size(); ++i) {
      if (naive_segment(p.substr(1), t.substr(i))) return true;
    }
    return false;
  }
  if (t.empty()) return false;
  return (p[0] == '?' || p[0] == t[0]) && naive_segment(p.substr(1), t.substr(1));
}

bool naive_path(const std::vector<std::string>& g, size_t gi, const std::vector<std::string>& s, size_t si) {
  if (gi == g.size()) return si == s.size();
  if (g[gi] == "**") {
    for (size_t k = si; k <= s.size(); ++k) {
      if (naive_path(g, gi + 1, s, k)) return true;
    }
    return false;
  }
  return si < s.size() && naive_segment(g[gi], s[si]) && naive_path(g, gi + 1, s, si + 1);
}

TEST(HttpPathGlobMatch, AgreesWithTryingEverySplit) {
  std::mt19937 random(16);
  auto pick = [&](std::initializer_list<const char*> from) {
    return std::string(*(from.begin() + random() % from.size()));
  };
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::string> glob_segments;
    std::string glob_text;
    for (size_t n = 1 + random() % 4; n > 0; --n) {
      std::string segment = pick({"**", "*", "a", "ab", "a*", "*b", "?", "a?b", "*a*", "??", "b"});
      glob_segments.push_back(segment);
      glob_text += "/" + segment;
    }
    std::vector<std::string> path_segments;
    std::string path_text;
    for (size_t n = random() % 6; n > 0; --n) {
      std::string segment = pick({"a", "b", "ab", "ba", "aab", "abb", "x"});
      path_segments.push_back(segment);
      path_text += "/" + segment;
    }
    if (path_text.empty()) path_text = "/";
    EXPECT_EQ(naive_path(glob_segments, 0, path_segments, 0), glob(glob_text).matches(path_text))
        << glob_text << " against " << path_text;
  }
}

TEST(HttpPathMethod, Normalised) {
  EXPECT_EQ("GET", *normalise_method("get"));
  EXPECT_EQ("GET", *normalise_method("GET"));
  EXPECT_EQ("PROPFIND", *normalise_method("PropFind"));
  EXPECT_EQ("M-SEARCH", *normalise_method("m-search"));
  EXPECT_EQ("X!#$%&'*+-.^_`|~9", *normalise_method("x!#$%&'*+-.^_`|~9"));
  EXPECT_EQ(std::string(32, 'A'), *normalise_method(std::string(32, 'a')));
}

TEST(HttpPathMethod, Refused) {
  EXPECT_NE(std::string::npos, normalise_method("").status().message().find("not 1 to 32"));
  EXPECT_FALSE(normalise_method(std::string(33, 'A')).is_ok());
  EXPECT_NE(std::string::npos, normalise_method("GE T").status().message().find("token characters"));
  EXPECT_FALSE(normalise_method("GET\r\n").is_ok());
  EXPECT_FALSE(normalise_method("G/ET").is_ok());
  EXPECT_FALSE(normalise_method("G:ET").is_ok());
  EXPECT_FALSE(normalise_method("G\"ET").is_ok());
  EXPECT_FALSE(normalise_method("G\xc3\xa9T").is_ok());
  EXPECT_FALSE(normalise_method(std::string_view("G\0T", 3)).is_ok());
}

}  // namespace
}  // namespace oishell
