// The `spec` message's payload (runtime/init_spec_codec.h): what init decodes before it seals the sandbox. A
// decoded spec must encode to bytes that decode and encode to the same bytes again.
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/init_spec_codec.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto decoded = oishell::decode_init_spec(bytes);
  if (!decoded) return 0;
  const std::string once = oishell::encode_init_spec(*decoded);
  auto again = oishell::decode_init_spec(once);
  FUZZ_CHECK(again.is_ok());
  FUZZ_CHECK(oishell::encode_init_spec(*again) == once);
  return 0;
}
