// The agent's websocket frames (agent/server/websocket.h) from a client of `interpreter --server`: parsed in pieces
// as they arrive, each message as the LMC protocol reads it (agent/server/oi_protocol.h LmcAccumulator). Whatever
// a frame holds, the parser ends in an event or an error with a close code, never more than its limits.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "agent/server/oi_protocol.h"
#include "agent/server/websocket.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::agent::server;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const uint8_t options = input.byte();
  const size_t piece = 1 + input.byte();
  const std::string_view stream = input.rest();
  const WsLimits limits{4 * 1024, 16 * 1024};
  WsFrameParser parser(limits, /*require_mask=*/!(options & 1));
  LmcAccumulator accumulator(8 * 1024);
  for (size_t at = 0; at < stream.size(); at += piece) {
    parser.feed(stream.substr(at, piece));
    while (std::optional<WsEvent> event = parser.next()) {
      if (event->kind == WsEvent::Kind::error) {
        FUZZ_CHECK(event->close_code >= 1000 && event->close_code < 5000);
        (void)ws_encode_close(event->close_code, event->payload);
        return 0;
      }
      if (event->kind == WsEvent::Kind::text) {
        FUZZ_CHECK(event->payload.size() <= limits.max_message_bytes);
        FUZZ_CHECK(is_valid_utf8(event->payload));
        nlohmann::json chunk = nlohmann::json::parse(event->payload, nullptr, /*allow_exceptions=*/false);
        if (!chunk.is_discarded()) (void)accumulator.feed(chunk);
      }
      if (event->kind == WsEvent::Kind::close) return 0;
    }
  }
  return 0;
}
