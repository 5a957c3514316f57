// The relay's HTTP/1.x request side (runtime/relay/http_parser.h, http_head_lines.h): a request head as the sandbox
// sends it to the proxy port or inside a terminated TLS connection, its CONNECT authority or absolute-form target,
// its body framing, the forwarded head, and the terminator's header-line walker and rewrites on it.
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/relay/http_head_lines.h"
#include "runtime/relay/http_parser.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::relay;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const size_t max_bytes = 64 + size_t{input.byte()} * 64;  // 64 .. 16 KiB
  const std::string_view text = input.rest();
  const HeadParse parsed = parse_request_head(text, max_bytes);
  if (parsed.status != HeadStatus::complete) {
    FUZZ_CHECK(parsed.status == HeadStatus::incomplete || !parsed.error.empty());
    return 0;
  }
  FUZZ_CHECK(parsed.consumed <= text.size());
  const HttpRequestHead& head = parsed.head;
  (void)request_body_framing(head);
  if (head.method == "CONNECT") {
    (void)parse_authority(head.target, std::nullopt);
  } else {
    auto target = parse_absolute_target(head.target);
    const std::string forwarded = serialise_forward_head(head, target ? target->path : head.target);
    // The forwarded head is itself a head the relay's parser accepts (what upstream reads is what was checked).
    const HeadParse reparsed = parse_request_head(forwarded, forwarded.size() + 1);
    FUZZ_CHECK(reparsed.status == HeadStatus::complete);
    FUZZ_CHECK(reparsed.consumed == forwarded.size());
  }
  (void)parse_authority(head.target, uint16_t{443});
  const std::string_view raw = text.substr(0, parsed.consumed);
  for (const HeaderLine& line : header_lines(raw)) {
    FUZZ_CHECK(line.value_begin <= line.value_end && line.value_end <= line.line.size());
  }
  (void)header_tokens(raw, "Authorization", "Bearer");
  (void)header_tokens(raw, "proxy-authorization", "basic");
  const std::string identity = with_identity_encoding(raw);
  FUZZ_CHECK(parse_request_head(identity, identity.size() + 1).status == HeadStatus::complete);
  return 0;
}
