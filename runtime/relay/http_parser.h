#pragma once
// HTTP/1.x request parsing for the relay: the request head (strict: CRLF only, no obs-fold, no control characters
// but HTAB in header values, no duplicate framing),
// CONNECT authorities, absolute-form targets, body framing and a byte-exact chunked-body scanner. Pure functions.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace oishell::relay {

struct HttpHeader {
  std::string name;
  std::string value;
};

struct HttpRequestHead {
  std::string method;
  std::string target;
  std::string version;  // "HTTP/1.1" or "HTTP/1.0"
  std::vector<HttpHeader> headers;

  // The first header named `name` (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
  size_t count(std::string_view name) const;
};

enum class HeadStatus { incomplete, complete, too_large, malformed };

struct HeadParse {
  HeadStatus status = HeadStatus::incomplete;
  size_t consumed = 0;  // bytes of `data` the head took (complete only), leading blank lines included
  HttpRequestHead head;
  std::string error;    // for malformed / too_large
};

// Parses a request head at the start of `data`; a head longer than `max_bytes` is too_large.
HeadParse parse_request_head(std::string_view data, size_t max_bytes);

struct Authority {
  std::string host;  // normalised (normalise_host)
  uint16_t port = 0;
  bool operator==(const Authority&) const = default;
};

// "host:port", "[v6]:port"; without a port, `default_port` is used (or it is an error when absent).
Result<Authority> parse_authority(std::string_view text, std::optional<uint16_t> default_port);

struct AbsoluteTarget {
  Authority origin;
  std::string path;  // origin-form: "/x?y" ("/" when the target had no path)
};

// "http://host[:port][/path]". https:// and other schemes are refused (https goes through CONNECT).
Result<AbsoluteTarget> parse_absolute_target(std::string_view target);

enum class BodyKind { none, length, chunked };
struct BodyFraming {
  BodyKind kind = BodyKind::none;
  uint64_t length = 0;
};

// Transfer-Encoding (chunked last) or one Content-Length; both at once, several different lengths, another
// transfer coding, or Transfer-Encoding in an HTTP/1.0 request are refused (request smuggling).
Result<BodyFraming> request_body_framing(const HttpRequestHead& head);

// The head to send upstream: origin-form request line, Proxy-Connection/Proxy-Authorization removed.
std::string serialise_forward_head(const HttpRequestHead& head, std::string_view path);

// A complete response with `Connection: close` and a short text body.
std::string http_error_response(int code, std::string_view reason, std::string_view body);

// Follows a chunked body as it passes through, to find where it ends (trailers included).
class ChunkedScanner {
 public:
  // Consumes bytes of the body from the start of `data`; returns how many belong to it (stops at the end).
  Result<size_t> feed(std::string_view data);
  bool done() const { return state_ == State::done; }
  // What the next byte fed is: chunk data (data_left() more bytes of it), framing (a chunk-size line, the CRLF after
  // a chunk's data), or the trailer section (its lines and the empty line that ends the body). The terminator keeps
  // the framing out of what it scrubs (scrubbed_stream.h).
  enum class Part { framing, data, trailer, done };
  Part part() const;
  uint64_t data_left() const { return state_ == State::data ? remaining_ : 0; }

 private:
  enum class State { size_line, data, data_crlf, trailer_line, done };
  State state_ = State::size_line;
  uint64_t remaining_ = 0;
  std::string line_;
};

}  // namespace oishell::relay
