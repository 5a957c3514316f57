// SecretScrubber (runtime/relay/secret_scrubber.h): secrets overwritten in place, whatever the reads split them by.
#include "runtime/relay/secret_scrubber.h"

#include "base/base64.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace oishell::relay {
namespace {

// Feeds `stream` in pieces of `step` bytes, as a socket would deliver it, and returns what was released. What a
// call holds back stays within the scrubber's bound.
std::string through(const SecretScrubber& scrubber, const std::string& stream, size_t step,
                    std::vector<std::string>* found) {
  std::string buffer, out;
  size_t released = 0;
  for (size_t at = 0; at < stream.size(); at += step) {
    buffer += stream.substr(at, step);
    const bool final = at + step >= stream.size();
    released = scrubber.scrub(buffer, released, final, found);
    EXPECT_LE(buffer.size() - released, scrubber.max_held()) << "step " << step;
    out += buffer.substr(0, released);  // sent
    buffer.erase(0, released);
    released = 0;
  }
  return out;
}

// `plain` with each byte spelled by `spell`, and where each byte's spelling begins (one more entry: the end).
struct Spelled {
  std::string text;
  std::vector<size_t> at;
};
template <typename Spell>
Spelled spelled(const std::string& plain, Spell spell) {
  Spelled out;
  for (char c : plain) {
    out.at.push_back(out.text.size());
    out.text += spell(c);
  }
  out.at.push_back(out.text.size());
  return out;
}

// `s` with the spellings of plain bytes [begin, end) overwritten.
std::string starred(const Spelled& s, size_t begin, size_t end) {
  std::string out = s.text;
  std::fill(out.begin() + static_cast<std::ptrdiff_t>(s.at[begin]), out.begin() + static_cast<std::ptrdiff_t>(s.at[end]),
            '*');
  return out;
}

std::string hex2(char c, const char* digits = "0123456789ABCDEF") {
  const auto u = static_cast<unsigned char>(c);
  return {digits[u >> 4], digits[u & 15]};
}

// Each spelling of a byte an echo may use (encoded_match.h), "as it is" first.
const std::vector<std::pair<std::string, std::function<std::string(char)>>>& spellings() {
  static const std::vector<std::pair<std::string, std::function<std::string(char)>>> all = {
      {"as it is", [](char c) { return std::string(1, c); }},
      {"JSON \\/", [](char c) { return c == '/' ? std::string("\\/") : std::string(1, c); }},
      {"JSON \\u00XX", [](char c) { return "\\u00" + hex2(c, "0123456789abcdef"); }},
      {"JSON \\u00XX upper", [](char c) { return "\\u00" + hex2(c); }},
      {"Go JSON", [](char c) { return c == '&' || c == '<' || c == '>' ? "\\u00" + hex2(c, "0123456789abcdef")
                                                                       : std::string(1, c); }},
      {"percent, all", [](char c) { return "%" + hex2(c); }},
      {"percent, lower", [](char c) { return "%" + hex2(c, "0123456789abcdef"); }},
      {"encodeURIComponent", [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'
                                                     ? std::string(1, c) : "%" + hex2(c); }},
      {"HTML text", [](char c) { return c == '&' ? std::string("&amp;") : std::string(1, c); }},
      {"HTML decimal", [](char c) { return "&#" + std::to_string(static_cast<unsigned char>(c)) + ";"; }},
      {"HTML hex, no ;", [](char c) { return "&#x" + hex2(c); }},
      {"HTML named", [](char c) { return c == '/' ? std::string("&sol;") : c == '+' ? std::string("&plus;")
                                          : c == '&' ? std::string("&amp;") : std::string(1, c); }},
  };
  return all;
}

TEST(SecretScrubber, EverySecretIsOverwrittenWhateverTheSplit) {
  SecretScrubber scrubber;
  scrubber.add("github", "ghp_S3cr3t");
  scrubber.add("basic", "eC1hY2Nlc3M6Z2hw");
  const std::string stream = "a ghp_S3cr3t b eC1hY2Nlc3M6Z2hw c ghp_S3cr3tghp_S3cr3t ghp_S3cr3";
  const std::string expected = "a ********** b **************** c ******************** ghp_S3cr3";
  for (size_t step = 1; step <= stream.size(); ++step) {
    std::vector<std::string> found;
    EXPECT_EQ(expected, through(scrubber, stream, step, &found)) << "step " << step;
    std::sort(found.begin(), found.end());
    EXPECT_EQ((std::vector<std::string>{"basic", "github", "github", "github"}), found) << "step " << step;
  }
}

TEST(SecretScrubber, HoldsBackOnlyWhatCouldStartASecret) {
  SecretScrubber scrubber;
  scrubber.add("k", "0123456789");
  std::string buffer(100, '.');
  EXPECT_EQ(100u, scrubber.scrub(buffer, 0, false, nullptr));  // no tail starts the secret: nothing waits
  buffer += "0123";
  EXPECT_EQ(100u, scrubber.scrub(buffer, 100, false, nullptr));  // "0123" might: it waits for what follows
  buffer += ".";
  EXPECT_EQ(105u, scrubber.scrub(buffer, 100, false, nullptr));  // it did not
  buffer += "012345678";
  EXPECT_EQ(105u, scrubber.scrub(buffer, 105, false, nullptr));
  EXPECT_EQ(114u, scrubber.scrub(buffer, 105, true, nullptr));  // final: everything goes
  // A last base64 character waits too: it could be the one that holds the first bits of the secret's base64.
  buffer += "\n\nx";
  EXPECT_EQ(116u, scrubber.scrub(buffer, 114, false, nullptr));
  // So does an escape cut short ("%3", "&#4"): the next bytes decide what it spells.
  buffer += "\n%3";
  EXPECT_EQ(118u, scrubber.scrub(buffer, 116, false, nullptr));
  // Without secrets nothing waits; repeats and empty values are not added.
  SecretScrubber none;
  none.add("empty", "");
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(buffer.size(), none.scrub(buffer, 0, false, nullptr));
}

// Issue 33, finding 2: an echo re-encodes what it quotes (JSON, a URL, a page). Each spelling of the secret inside
// a JSON answer is overwritten whole, whatever the reads split it by; before, only the literal secret was.
TEST(SecretScrubber, AnEchoedSecretIsOverwrittenInEverySpellingOfItsBytes) {
  const std::string secret = "ghp_S3cr/3t+T0k&en";
  SecretScrubber scrubber;
  scrubber.add("k", secret);
  const std::string plain = "{\"echo\":\"Authorization: Bearer " + secret + "\"}";
  const size_t begin = plain.find(secret), end = begin + secret.size();
  for (const auto& [name, spell] : spellings()) {
    // Only the secret's bytes are spelled so; the rest is as a JSON body has it.
    Spelled s;
    for (size_t i = 0; i < plain.size(); ++i) {
      s.at.push_back(s.text.size());
      s.text += i >= begin && i < end ? spell(plain[i]) : std::string(1, plain[i]);
    }
    s.at.push_back(s.text.size());
    const std::string expected = starred(s, begin, end);
    for (size_t step : {size_t{1}, size_t{2}, size_t{7}, s.text.size()}) {
      std::vector<std::string> found;
      EXPECT_EQ(expected, through(scrubber, s.text, step, &found)) << name << ", step " << step;
      EXPECT_EQ(std::vector<std::string>{"k"}, found) << name << ", step " << step;
    }
  }
}

// An echo that base64-encodes the header line (or the whole request): the characters holding any bit of the secret
// are overwritten, at each of the three alignments, in both alphabets, and spelled through JSON or a URL too.
TEST(SecretScrubber, TheBase64OfAnEchoedHeaderLineIsOverwritten) {
  const std::string secret = "ghp_S3cr3tG1thubT0ken~~~>>>???";  // "~>?" make "+" and "/" in base64
  SecretScrubber scrubber;
  scrubber.add("k", secret);
  for (const std::string pad : {"", "X", "XY"}) {
    const std::string line = pad + "Authorization: Bearer " + secret + "\r\nAccept: */*\r\n";
    const size_t first_bit = 8 * line.find(secret), end_bit = first_bit + 8 * secret.size();
    const size_t first = first_bit / 6, last = (end_bit + 5) / 6;  // the characters holding the secret's bits
    std::string standard = base64_encode(line), url_safe = standard;
    std::replace(url_safe.begin(), url_safe.end(), '+', '-');
    std::replace(url_safe.begin(), url_safe.end(), '/', '_');
    ASSERT_NE(standard, url_safe);
    for (const std::string& encoded : {standard, url_safe}) {
      for (const auto& [name, spell] : spellings()) {
        if (name.starts_with("HTML") || name == "JSON \\u00XX upper") continue;  // (the same as its neighbours)
        const Spelled s = spelled(encoded, spell);
        const std::string expected = starred(s, first, last);
        for (size_t step : {size_t{1}, size_t{3}, s.text.size()}) {
          std::vector<std::string> found;
          EXPECT_EQ(expected, through(scrubber, s.text, step, &found)) << "pad " << pad.size() << ", " << name;
          EXPECT_EQ(std::vector<std::string>{"k"}, found) << "pad " << pad.size() << ", " << name;
        }
      }
    }
  }
}

// The neighbours: what is not the secret passes byte for byte, however it is spelled: the secret one byte off,
// base64 of another token, random base64, text full of escapes.
TEST(SecretScrubber, WhatIsNotTheSecretPassesAsItIs) {
  const std::string secret = "ghp_S3cr/3t+T0k&en";
  SecretScrubber scrubber;
  scrubber.add("k", secret);
  std::string near = secret;
  near[9] = 'X';
  std::string stream = "{\"a\":\"" + near + "\",\"b\":\"" + secret.substr(0, secret.size() - 1) + "\"}\n";
  for (const auto& [name, spell] : spellings()) stream += spelled(near, spell).text + "\n";
  stream += base64_encode("Authorization: Bearer " + near + "\r\n") + "\n";
  std::string random;
  for (int i = 0; i < 3000; ++i) random.push_back(static_cast<char>((i * 7919 + 13) % 251));
  stream += base64_encode(random) + "\n% %% %4 &#; &#x; &amp &ampx \\u00 \\x4 + \\/ end";
  for (size_t step : {size_t{1}, size_t{5}, size_t{4096}}) {
    std::vector<std::string> found;
    EXPECT_EQ(stream, through(scrubber, stream, step, &found)) << "step " << step;
    EXPECT_TRUE(found.empty()) << "step " << step;
  }
}

}  // namespace
}  // namespace oishell::relay
