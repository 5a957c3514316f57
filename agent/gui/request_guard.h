#pragma once
// Who may talk to the web UI's server: the page the user opened with the token, and nothing else. Pure checks on a
// parsed request, kept apart from the sockets so that each rule has a test (tests/agent/gui_guard_test.cc).
//
//   Host      exactly the address served (base/http/loopback_origin.h: DNS rebinding is refused)
//   Origin    when sent, the same origin (base/http/loopback_origin.h); required on every POST
//   Sec-Fetch-Site   when sent, "same-origin" for the API (a cross-site request is refused before any token check)
//   token     on every API request, as `Authorization: Bearer T`, compared in constant time. The address printed
//             at start carries it in its fragment (`/#token=T`), which no request sends: the page's script reads
//             it, keeps it in the tab's sessionStorage (its origin's only: ports apart) and sends it in the header.
//             No cookie: a browser sends a cookie to every port of 127.0.0.1, so any local server the user visits
//             would receive it; a header is sent only by the page's own code.
//   POST      a JSON body (Content-Type application/json: a cross-origin form cannot send one without a preflight)
// The page and its files are no secret (they are in the binary) and are served with the Host check alone.
#include <string>
#include <string_view>

#include "base/http/http_message.h"
#include "base/http/loopback_origin.h"

namespace oishell::agent::gui {

struct GuardVerdict {
  int status = 0;       // 0: allowed; else the status to answer
  std::string reason;   // why not
};

class RequestGuard {
 public:
  // `host`: the numeric address listened on ("127.0.0.1" or "::1"); `token`: the session's secret.
  RequestGuard(std::string host, int port, std::string token);

  // Host, Origin and Sec-Fetch-Site. `navigation`: the page or its files, which a link or the browser's launcher
  // may open from anywhere.
  GuardVerdict check_origin(const http::HttpRequest& request, bool navigation) const;
  // Whether the request carries the token (Authorization: Bearer).
  bool authenticated(const http::HttpRequest& request) const;
  // For a POST: the JSON content type.
  static bool json_body(const http::HttpRequest& request);

  // "http://127.0.0.1:PORT/#token=..." (what the user opens).
  std::string url_with_token() const;

 private:
  std::string token_;
  http::LoopbackOrigin origin_;
};

}  // namespace oishell::agent::gui
