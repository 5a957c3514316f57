// A needle found through one layer of escapes (runtime/relay/encoded_match.h).
#include "runtime/relay/encoded_match.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace oishell::relay {
namespace {

// Small sets without allocation: the ends of the spellings being followed, the decodings at one position.
template <typename T, size_t N>
struct SmallSet {
  std::array<T, N> items;  // the first `count` are set
  size_t count = 0;
  void add(const T& item) {
    for (size_t i = 0; i < count; ++i) {
      if (items[i] == item) return;
    }
    // More distinct items than N do not arise (one position decodes a handful of ways, and each needle byte adds
    // at most two ends per end followed); dropping one would only miss a spelling no encoder writes.
    if (count < N) items[count++] = item;
  }
};

struct Decoding {
  unsigned char value;
  size_t end;
  bool operator==(const Decoding&) const = default;
};
using Decodings = SmallSet<Decoding, 8>;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `digits` hex digits at text[from]: their value, -1 when one is not a hex digit, -2 when the text ends first.
int fixed_hex(std::string_view text, size_t from, size_t digits) {
  int value = 0;
  for (size_t i = 0; i < digits; ++i) {
    if (from + i >= text.size()) return -2;
    const int digit = hex_value(text[from + i]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// HTML named references for ASCII punctuation (HTML's list; the control characters' ones are left out, a secret
// holds none). The first kLegacyNamed are also read without their ";", as browsers do.
struct Named {
  std::string_view name;
  char c;
};
constexpr Named kNamed[] = {
    {"amp", '&'},     {"lt", '<'},        {"gt", '>'},          {"quot", '"'},         {"AMP", '&'},
    {"LT", '<'},      {"GT", '>'},        {"QUOT", '"'},        {"excl", '!'},         {"num", '#'},
    {"dollar", '$'},  {"percnt", '%'},    {"apos", '\''},       {"lpar", '('},         {"rpar", ')'},
    {"ast", '*'},     {"midast", '*'},    {"plus", '+'},        {"comma", ','},        {"period", '.'},
    {"sol", '/'},     {"colon", ':'},     {"semi", ';'},        {"equals", '='},       {"quest", '?'},
    {"commat", '@'},  {"lsqb", '['},      {"lbrack", '['},      {"bsol", '\\'},        {"rsqb", ']'},
    {"rbrack", ']'},  {"Hat", '^'},       {"lowbar", '_'},      {"UnderBar", '_'},     {"grave", '`'},
    {"lcub", '{'},    {"lbrace", '{'},    {"verbar", '|'},      {"vert", '|'},         {"VerticalLine", '|'},
    {"rcub", '}'},    {"rbrace", '}'},    {"DiacriticalGrave", '`'},
};
constexpr size_t kLegacyNamed = 8;

// An HTML character reference at text[at] == '&' (ASCII values only: a higher code point is several bytes).
void entity(std::string_view text, size_t at, Decodings& out, bool& more) {
  if (at + 1 >= text.size()) {
    more = true;
    return;
  }
  if (text[at + 1] == '#') {
    size_t pos = at + 2;
    int base = 10;
    if (pos < text.size() && (text[pos] == 'x' || text[pos] == 'X')) {
      base = 16;
      ++pos;
    }
    const size_t first = pos;
    uint32_t value = 0;
    while (pos < text.size() && pos - first < kMaxEntityDigits) {
      const int digit =
          base == 16 ? hex_value(text[pos]) : (text[pos] >= '0' && text[pos] <= '9' ? text[pos] - '0' : -1);
      if (digit < 0) break;
      value = std::min<uint32_t>(value * static_cast<uint32_t>(base) + static_cast<uint32_t>(digit), 0x110000);
      ++pos;
    }
    if (pos >= text.size()) {  // the text ends inside the reference, or before its `;`: more decides
      more = true;
      return;
    }
    if (pos == first || value >= 0x80) return;
    out.add({static_cast<unsigned char>(value), pos});
    if (text[pos] == ';') out.add({static_cast<unsigned char>(value), pos + 1});
    return;
  }
  const std::string_view rest = text.substr(at + 1);
  for (size_t i = 0; i < std::size(kNamed); ++i) {
    const std::string_view name = kNamed[i].name;
    if (!rest.empty() && rest[0] != name[0]) continue;  // (most names, without a call)
    const auto value = static_cast<unsigned char>(kNamed[i].c);
    if (rest.size() <= name.size()) {
      if (name.starts_with(rest) || rest.starts_with(name)) more = true;  // the `;` (or the name) may follow
      if (rest == name && i < kLegacyNamed) out.add({value, at + 1 + name.size()});
      continue;
    }
    if (!rest.starts_with(name)) continue;
    const size_t after = at + 1 + name.size();
    if (i < kLegacyNamed) out.add({value, after});
    if (text[after] == ';') out.add({value, after + 1});
  }
}

// Every byte text[at] can stand for, and where each spelling ends; `more` when the text ends inside a spelling.
void decodings(std::string_view text, size_t at, Decodings& out, bool& more) {
  if (at >= text.size()) {
    more = true;
    return;
  }
  const char c = text[at];
  out.add({static_cast<unsigned char>(c), at + 1});
  auto add_hex = [&](size_t from, size_t digits, bool ascii_only) {
    const int value = fixed_hex(text, from, digits);
    if (value == -2) more = true;
    if (value >= 0 && (!ascii_only || value < 0x80)) out.add({static_cast<unsigned char>(value), from + digits});
  };
  switch (c) {
    case '+':
      out.add({' ', at + 1});
      break;
    case '%':
      add_hex(at + 1, 2, false);
      break;
    case '\\': {
      if (at + 1 >= text.size()) {
        more = true;
        break;
      }
      const char next = text[at + 1];
      if (next == '/' || next == '\\' || next == '"' || next == '\'') out.add({static_cast<unsigned char>(next), at + 2});
      if (next == 'u') add_hex(at + 2, 4, true);
      if (next == 'x') add_hex(at + 2, 2, false);
      break;
    }
    case '&':
      entity(text, at, out, more);
      break;
    default:
      break;
  }
}

}  // namespace

bool begins_escape(char c) { return c == '%' || c == '+' || c == '\\' || c == '&'; }

bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
         c == '-' || c == '_';
}

FirstBytes first_bytes(std::string_view text, size_t at) {
  FirstBytes out;
  Decodings here;
  decodings(text, at, here, out.more);
  for (size_t i = 0; i < here.count && out.count < out.spellings.size(); ++i) {
    out.spellings[out.count++] = {here.items[i].value, here.items[i].end};
  }
  return out;
}

EncodedMatch match_encoded(std::string_view text, size_t at, const EncodedNeedle& needle, size_t* end) {
  using Ends = SmallSet<size_t, 16>;
  Ends current;
  current.add(at);
  bool more = false;
  const size_t n = needle.bytes.size();
  for (size_t j = 0; j < n; ++j) {
    const bool any = (j == 0 && needle.any_first) || (j + 1 == n && needle.any_last);
    const auto wanted = static_cast<unsigned char>(needle.bytes[j]);
    Ends next;
    for (size_t i = 0; i < current.count; ++i) {
      Decodings here;
      decodings(text, current.items[i], here, more);
      for (size_t k = 0; k < here.count; ++k) {
        const Decoding& d = here.items[k];
        if (any ? is_base64_char(static_cast<char>(d.value)) : d.value == wanted) next.add(d.end);
      }
    }
    if (next.count == 0) return more ? EncodedMatch::partial : EncodedMatch::none;
    current = next;
  }
  if (end) {
    *end = *std::max_element(current.items.begin(), current.items.begin() + static_cast<std::ptrdiff_t>(current.count));
  }
  return EncodedMatch::whole;
}

}  // namespace oishell::relay
