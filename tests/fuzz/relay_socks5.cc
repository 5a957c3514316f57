// The relay's SOCKS5 handshake (runtime/relay/socks5.h): the greeting, then the request, as the sandbox sends them
// to the SOCKS port, parsed whole and byte by byte (a partial message is incomplete, never an error or a crash).
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/relay/socks5.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::relay;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  Socks5Greeting greeting;
  const Socks5Parse g = parse_socks5_greeting(text, greeting, error);
  for (size_t cut = 0; cut < text.size() && cut < 300; ++cut) {
    Socks5Greeting partial;
    std::string partial_error;
    const Socks5Parse p = parse_socks5_greeting(text.substr(0, cut), partial, partial_error);
    if (g == Socks5Parse::complete) FUZZ_CHECK(p != Socks5Parse::complete || partial.consumed <= cut);
  }
  if (g != Socks5Parse::complete) return 0;
  FUZZ_CHECK(greeting.consumed <= text.size());
  const std::string_view rest = text.substr(greeting.consumed);
  Socks5Request request;
  const Socks5Parse r = parse_socks5_request(rest, request, error);
  if (r == Socks5Parse::complete) {
    FUZZ_CHECK(request.consumed <= rest.size());
    FUZZ_CHECK(!request.host.empty());
    for (size_t cut = 0; cut < request.consumed; ++cut) {
      Socks5Request partial;
      std::string partial_error;
      FUZZ_CHECK(parse_socks5_request(rest.substr(0, cut), partial, partial_error) == Socks5Parse::incomplete);
    }
  }
  return 0;
}
