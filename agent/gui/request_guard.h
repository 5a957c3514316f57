#pragma once
// Who may talk to the web UI's server: the page the user opened with the token, and nothing else. Pure checks on a
// parsed request, kept apart from the sockets so that each rule has a test (tests/agent/gui_request_guard_test.cc).
//
//   Host      exactly the address served ("127.0.0.1:PORT", "localhost:PORT"; "[::1]:PORT" on IPv6): a page of
//             another site whose name was rebound to 127.0.0.1 (DNS rebinding) sends its own name, and is refused
//   Origin    when sent, the same origin ("http://127.0.0.1:PORT"...); required on every POST
//   Sec-Fetch-Site   when sent, "same-origin" for the API (a cross-site request is refused before any token check)
//   token     the `token` query parameter of the URL printed at start (only on the page itself, which trades it for
//             a cookie), the cookie (HttpOnly, SameSite=Strict, this port's own name), or Authorization: Bearer;
//             compared in constant time
//   POST      a JSON body (Content-Type application/json: a cross-origin form cannot send one without a preflight)
#include <optional>
#include <string>
#include <string_view>

#include "agent/server/http.h"

namespace oishell::agent::gui {

struct GuardVerdict {
  int status = 0;       // 0: allowed; else the status to answer
  std::string reason;   // why not
};

class RequestGuard {
 public:
  // `host`: the numeric address listened on ("127.0.0.1" or "::1"); `token`: the session's secret.
  RequestGuard(std::string host, int port, std::string token);

  // Host, Origin and Sec-Fetch-Site. `navigation`: the page itself (GET /), which a link or the browser's
  // launcher may open from anywhere; its token is then what protects it.
  GuardVerdict check_origin(const server::HttpRequest& request, bool navigation) const;
  // Whether the request carries the token (cookie, Bearer, or `token=` in the query when `query_allowed`).
  bool authenticated(const server::HttpRequest& request, bool query_allowed) const;
  // For a POST: the JSON content type.
  static bool json_body(const server::HttpRequest& request);

  // "oishell_gui_PORT"
  const std::string& cookie_name() const { return cookie_name_; }
  // The Set-Cookie value that keeps the token for this origin.
  std::string set_cookie() const;
  // "http://127.0.0.1:PORT/?token=..." (what the user opens).
  std::string url_with_token() const;

 private:
  std::string host_, token_, cookie_name_;
  int port_;
  std::string allowed_hosts_[2];    // Host values
  std::string allowed_origins_[2];  // Origin values
};

// The value of `name` in a Cookie header ("a=1; b=2"), or nullopt.
std::optional<std::string> cookie_value(std::string_view header, std::string_view name);
// The value of `name` in a query ("a=1&token=x"), percent-decoded; nullopt when absent.
std::optional<std::string> query_value(std::string_view query, std::string_view name);

}  // namespace oishell::agent::gui
