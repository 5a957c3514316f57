#pragma once
// The first-bytes check of a tunnel (CONNECT, SOCKS5) whose deciding rule inspects (docs/network.md, "Checks on
// the first bytes"). The client's bytes are held until they show one of:
//   - a TLS ClientHello whose server name (SNI) is the tunnel's host; for an IP destination, a ClientHello without
//     a server name (a name there would pick a site on a shared address that nothing can check). After it the
//     stream is encrypted and passes untouched;
//   - an HTTP/1.x request with exactly one Host header naming the tunnel's host (its port, when written, the
//     tunnel's port), a target in origin-form, `*`, or absolute-form naming the same authority. Every request of
//     a kept-alive connection is checked (bodies are skipped by their framing); a request with `Upgrade` (a
//     WebSocket) ends the checking, as what follows is no longer HTTP/1.x; `Upgrade: h2c` and CONNECT are refused.
// Anything else (another protocol, a ClientHello without a server name for a name, a malformed request) is
// refused before a byte of it is forwarded, with a rule "inspection: ..." and a reason. Pure: no I/O.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/relay/http_parser.h"

namespace oishell::relay {

struct InspectStep {
  enum class State {
    need_more,  // released what it could; the rest waits for more bytes
    opaque,     // released everything; what follows passes unchecked (TLS after its ClientHello, a WebSocket)
    refused,    // close the tunnel; `rule` and `reason` say why
  };
  State state = State::need_more;
  size_t released = 0;  // how many of the offered bytes may go to the server (need_more)
  std::string rule;     // "inspection: ..."
  std::string reason;
};

class TunnelInspector {
 public:
  // `host`: the tunnel's normalised host (a name or a canonical IP literal); `max_head_bytes`: the longest request
  // head (or ClientHello) held while incomplete.
  TunnelInspector(std::string host, uint16_t port, size_t max_head_bytes);

  // `fresh`: the client's bytes that were not released yet, oldest first: what an earlier call did not release is
  // offered again, followed by what came since. `eof`: the client sent its last byte.
  InspectStep inspect(std::string_view fresh, bool eof);

 private:
  enum class Mode { start, tls, http, opaque };
  enum class Body { none, length, chunked };

  InspectStep inspect_tls(std::string_view fresh, bool eof);
  InspectStep inspect_http(std::string_view fresh, bool eof);
  // Checks one complete request head; empty when it may pass, else the refusal. Sets the body to skip.
  InspectStep check_request(const HttpRequestHead& head);
  // Whether `authority` ("host[:port]") names the tunnel's host and port (a missing port counts as the tunnel's).
  bool names_tunnel(std::string_view authority) const;
  std::string destination() const;
  InspectStep refuse(std::string rule, std::string reason) const;

  std::string host_;
  uint16_t port_;
  bool ip_destination_;
  size_t max_head_;
  Mode mode_ = Mode::start;
  Body body_ = Body::none;
  uint64_t body_left_ = 0;
  ChunkedScanner chunked_;
};

}  // namespace oishell::relay
