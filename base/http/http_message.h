#pragma once
// HTTP/1.1 requests (RFC 9112), parsed incrementally under strict limits, and responses: what the loopback servers
// (`interpreter --server` and `--gui`, `oishell mcp --http`) sit on.
//
// What is accepted: origin-form targets ("/path?query"), HTTP/1.0 and 1.1, header lines ended by CRLF, a body
// given by one Content-Length. What is refused, with the status to answer: a head larger than max_head_bytes or
// with more than max_headers fields (431), a body larger than max_body_bytes (413), Transfer-Encoding (501: the
// server takes no chunked bodies, which also leaves no room for request smuggling), any other HTTP version (505),
// and everything malformed (400): bare LF, obsolete line folding, whitespace before a colon, control characters,
// a missing or repeated Host in HTTP/1.1, conflicting Content-Length values.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oishell::http {

struct HttpLimits {
  size_t max_head_bytes = 16 * 1024;  // request line and header fields, with their CRLFs
  size_t max_headers = 64;
  size_t max_body_bytes = 1024 * 1024;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: "/openai/chat/completions?x=1"
  std::string path;    // the target up to '?'
  std::string query;   // after '?', without it
  int minor_version = 1;
  std::vector<std::pair<std::string, std::string>> headers;  // names as sent; values without surrounding OWS
  std::string body;

  // The first field named `name` (case-insensitive).
  const std::string* header(std::string_view name) const;
  // Whether a comma-separated field (Connection, Upgrade) lists `token` (case-insensitive), in any of its lines.
  bool header_has_token(std::string_view name, std::string_view token) const;
};

struct HttpError {
  int status = 400;
  std::string message;  // for the response body: what was wrong
};

class HttpRequestParser {
 public:
  enum class State { need_more, complete, error };
  explicit HttpRequestParser(HttpLimits limits = {}) : limits_(limits) {}

  // Takes more bytes of the connection. Once complete or error, further input is kept unparsed (leftover()).
  State feed(std::string_view data);
  State state() const { return state_; }
  const HttpRequest& request() const { return request_; }
  HttpRequest& request() { return request_; }
  const HttpError& error() const { return error_; }
  // The head has been parsed (request() has its method, target and headers); the body may still be arriving.
  bool head_complete() const { return head_done_; }
  // Bytes received after the complete request (a websocket client may send its first frame at once).
  std::string take_leftover() { return std::exchange(buf_, {}); }

 private:
  State fail(int status, std::string message);
  State parse_head(std::string_view head);

  HttpLimits limits_;
  State state_ = State::need_more;
  bool head_done_ = false;
  size_t body_length_ = 0;
  std::string buf_;
  HttpRequest request_;
  HttpError error_;
};

// "Not Found" for 404; "" for a status this server never sends.
std::string_view reason_phrase(int status);

// A whole response: status line, `headers`, Content-Length, Connection: close, body.
std::string http_response(int status, const std::vector<std::pair<std::string, std::string>>& headers,
                          std::string_view body);
// A JSON error response: {"detail": message} (the shape FastAPI, and so Open Interpreter, uses).
std::string http_json_error(int status, std::string_view message);
// The head of a response whose body runs until the connection closes (a server-sent event stream).
std::string http_stream_head(int status, const std::vector<std::pair<std::string, std::string>>& headers);

bool ascii_iequals(std::string_view a, std::string_view b);

}  // namespace oishell::http
