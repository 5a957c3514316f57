// The relay's inspection of a CONNECT tunnel (runtime/relay/tunnel_inspect.h): the sandbox's first bytes through
// an allowed tunnel, read as a TLS ClientHello or as plain HTTP requests (whose Host and targets must name the
// tunnel's destination), offered in pieces. What it releases never exceeds what was offered.
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/relay/tunnel_inspect.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::relay;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const uint8_t options = input.byte();
  const size_t piece = 1 + input.byte();
  const std::string_view stream = input.rest();
  const std::string host = (options & 1) ? "93.184.216.34" : "example.com";
  const uint16_t port = (options & 2) ? 80 : 443;
  TunnelInspector inspector(host, port, 256 + static_cast<size_t>(options >> 2) * 64);
  std::string pending;
  for (size_t at = 0; at <= stream.size(); at += piece) {
    const bool eof = at + piece >= stream.size();
    // What is offered: every byte not released yet, oldest first (as runtime/relay/connection_data.cc offers it).
    pending.append(stream.substr(std::min(at, stream.size()), piece));
    const InspectStep step = inspector.inspect(pending, eof);
    if (step.state == InspectStep::State::refused) {
      FUZZ_CHECK(!step.reason.empty());
      return 0;
    }
    if (step.state == InspectStep::State::opaque) return 0;
    FUZZ_CHECK(step.released <= pending.size());
    pending.erase(0, step.released);
    if (eof) break;
  }
  return 0;
}
