#include "base/http/bearer_token.h"

#include <sys/random.h>

#include <cerrno>
#include <algorithm>
#include <cstdlib>

#include "base/hex.h"

namespace oishell::http {

std::string generate_token() {
  char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::abort();  // no randomness: never fall back to a guessable token
    got += static_cast<size_t>(n);
  }
  return hex_encode(std::string_view(bytes, sizeof bytes));
}

bool tokens_equal(std::string_view a, std::string_view b) {
  // Every byte of the longer one is looked at; a length difference alone makes them unequal.
  size_t n = std::max(a.size(), b.size());
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0 && !a.empty();
}

std::string request_token(const HttpRequest& request) {
  if (const std::string* key = request.header("X-API-KEY"); key && !key->empty()) return *key;
  if (const std::string* auth = request.header("Authorization")) {
    std::string_view v = *auth;
    if (v.size() > 7 && ascii_iequals(v.substr(0, 7), "Bearer ")) {
      v.remove_prefix(7);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return std::string(v);
    }
  }
  return "";
}

}  // namespace oishell::http
