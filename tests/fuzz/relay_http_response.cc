// The relay's HTTP/1.x response side (runtime/relay/http_response.h): a response head from an upstream the TLS
// terminator forwards, and how its body ends, for each request method.
#include <cstdint>
#include <string_view>

#include "runtime/relay/http_response.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::relay;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const size_t max_bytes = 64 + size_t{input.byte()} * 64;
  const std::string_view text = input.rest();
  const ResponseHeadParse parsed = parse_response_head(text, max_bytes);
  if (parsed.status != HeadStatus::complete) {
    FUZZ_CHECK(parsed.status == HeadStatus::incomplete || !parsed.error.empty());
    return 0;
  }
  FUZZ_CHECK(parsed.consumed <= text.size());
  FUZZ_CHECK(parsed.code >= 100 && parsed.code <= 999);
  for (const char* method : {"GET", "HEAD", "POST", "CONNECT"}) (void)response_body_framing(parsed, method);
  return 0;
}
