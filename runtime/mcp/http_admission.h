#pragma once
// Who may talk to `oishell mcp --http` (docs/mcp.md "Streamable HTTP"): pure checks on a parsed request, in the
// order they are made, kept apart from the sockets so that each rule has a test (tests/mcp/http_admission_test.cc).
//
//   Host      the address served (base/http/loopback_origin.h): a rebound name (DNS rebinding) gets 421
//   Origin    absent (a program) or this server's own; any other page gets 403
//   token     `Authorization: Bearer T` on every request, compared in constant time; 401 otherwise, with
//             `WWW-Authenticate: Bearer`. No cookie is set or read.
//   path      the one endpoint, /mcp (404 elsewhere); methods POST, GET and DELETE (405 otherwise)
//   POST      Content-Type application/json (415); Accept lists application/json or text/event-stream (406)
//   GET       Accept lists text/event-stream (406)
//   MCP-Protocol-Version   when sent, a version this server speaks (400)
// The session's own rules (Mcp-Session-Id: 400 when missing, 404 when not this session's) are the transport's,
// which knows the session.
#include <string>

#include "base/http/http_message.h"
#include "base/http/loopback_origin.h"

namespace oishell::mcp {

inline constexpr const char* kHttpEndpoint = "/mcp";

struct HttpVerdict {
  int status = 0;       // 0: admitted; else the HTTP status to answer
  std::string reason;   // why not, for the error body
};

// How a POST's answer is sent: an event stream (progress notifications on the way) or one JSON body.
enum class AnswerForm { event_stream, json };

class HttpAdmission {
 public:
  // `host`: the numeric address listened on; `token`: the server's secret.
  HttpAdmission(const std::string& host, int port, std::string token);

  // Host, Origin, token, path, method, headers for the method. The first rule broken decides.
  HttpVerdict admit(const http::HttpRequest& request) const;
  // For an admitted POST: the form its answer takes (an event stream when the client accepts one).
  static AnswerForm answer_form(const http::HttpRequest& request);
  // "http://127.0.0.1:PORT/mcp"
  std::string endpoint_url() const;

 private:
  http::LoopbackOrigin origin_;
  std::string token_;
};

// Whether a comma-separated Accept lists `media_type` (parameters such as ";q=0.9" ignored) or "*/*".
bool accepts(const http::HttpRequest& request, const std::string& media_type);

}  // namespace oishell::mcp
