// The relay's ClientHello reader (runtime/relay/tls_sni.h): the first bytes of a CONNECT tunnel, read for the SNI
// to compare with the CONNECT host. Read whole and at every prefix: a prefix of a found name is need_more, never a
// different name.
#include <cstdint>
#include <string_view>

#include "runtime/relay/tls_sni.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::relay;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const size_t max_hello = 64 + size_t{input.byte()} * 256;
  const std::string_view text = input.rest();
  const SniResult whole = peek_client_hello_sni(text, max_hello);
  if (whole.status == SniStatus::found) FUZZ_CHECK(!whole.name.empty());
  if (whole.status == SniStatus::found || whole.status == SniStatus::no_sni) {
    // Every shorter prefix is need_more, or the same answer (bytes past the ClientHello are not read).
    for (size_t cut = 0; cut < text.size(); cut += 1 + cut / 16) {
      const SniResult part = peek_client_hello_sni(text.substr(0, cut), max_hello);
      FUZZ_CHECK(part.status == SniStatus::need_more || part.status == SniStatus::not_tls ||
                 (part.status == whole.status && part.name == whole.name));
    }
  }
  return 0;
}
