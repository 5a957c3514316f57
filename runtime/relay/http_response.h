#pragma once
// HTTP/1.x response heads, for the TLS terminator (https_terminator.h): it forwards each response as it comes and
// must find where it ends, so that the next request of a kept-alive connection is decided on its own. The header
// lines are held to http_parser.h's request strictness (CRLF only, no obs-fold, no duplicate framing): a response
// the relay could frame two ways would let an upstream desynchronise which response answers which request.
// Pure functions.
#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"
#include "runtime/relay/http_parser.h"

namespace oishell::relay {

struct ResponseHeadParse {
  HeadStatus status = HeadStatus::incomplete;
  size_t consumed = 0;  // bytes of the head (complete only)
  int code = 0;         // 100..999
  std::string version;  // "HTTP/1.1" or "HTTP/1.0"
  std::vector<HttpHeader> headers;
  std::string error;    // malformed / too_large
};

// Parses the response head at the start of `data` (status line "HTTP/1.x DDD reason"); longer than `max_bytes` is
// too_large.
ResponseHeadParse parse_response_head(std::string_view data, size_t max_bytes);

// How a response's body ends (RFC 9112 6.3).
enum class ResponseBody {
  none,        // 1xx, 204, 304, or the answer to HEAD: the head is the whole response
  length,      // Content-Length bytes
  chunked,     // chunked transfer coding
  until_close  // neither: the body ends when the server closes the connection
};
struct ResponseFraming {
  ResponseBody kind = ResponseBody::none;
  uint64_t length = 0;
};

// The framing of `head`, the answer to a request with `request_method` (upper case). Conflicting or duplicate
// framing, and transfer codings other than a lone chunked, are refused (http_parser.h's request_body_framing rules).
Result<ResponseFraming> response_body_framing(const ResponseHeadParse& head, std::string_view request_method);

}  // namespace oishell::relay
