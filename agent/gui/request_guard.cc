#include "agent/gui/request_guard.h"

#include "agent/server/auth.h"

namespace oishell::agent::gui {

using server::ascii_iequals;
using server::HttpRequest;

RequestGuard::RequestGuard(std::string host, int port, std::string token)
    : host_(std::move(host)), token_(std::move(token)) {
  const std::string p = ":" + std::to_string(port);
  const bool v6 = host_.find(':') != std::string::npos;
  allowed_hosts_[0] = (v6 ? "[" + host_ + "]" : host_) + p;
  allowed_hosts_[1] = "localhost" + p;
  allowed_origins_[0] = "http://" + allowed_hosts_[0];
  allowed_origins_[1] = "http://" + allowed_hosts_[1];
}

GuardVerdict RequestGuard::check_origin(const HttpRequest& request, bool navigation) const {
  const std::string* host = request.header("Host");
  if (!host || (!ascii_iequals(*host, allowed_hosts_[0]) && !ascii_iequals(*host, allowed_hosts_[1]))) {
    return {421, "this server answers only to " + allowed_hosts_[0] + " (the Host was " +
                     (host ? "`" + *host + "`" : std::string("missing")) + ")"};
  }
  const std::string* origin = request.header("Origin");
  if (origin && *origin != allowed_origins_[0] && *origin != allowed_origins_[1]) {
    return {403, "requests from other origins are refused"};
  }
  if (request.method == "POST" && !origin) return {403, "a POST must come from the page (no Origin was sent)"};
  if (!navigation) {
    const std::string* site = request.header("Sec-Fetch-Site");
    if (site && *site != "same-origin") return {403, "requests from other sites are refused"};
  }
  return {};
}

bool RequestGuard::authenticated(const HttpRequest& request) const {
  const std::string presented = server::request_token(request);  // Authorization: Bearer (or X-API-KEY)
  return server::tokens_equal(presented, token_);
}

bool RequestGuard::json_body(const HttpRequest& request) {
  const std::string* type = request.header("Content-Type");
  if (!type) return false;
  std::string_view t = std::string_view(*type).substr(0, type->find(';'));
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  return ascii_iequals(t, "application/json");
}

std::string RequestGuard::url_with_token() const {
  return "http://" + allowed_hosts_[0] + "/#token=" + token_;
}

}  // namespace oishell::agent::gui
