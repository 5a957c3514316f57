#include "agent/gui/request_guard.h"

#include "base/http/bearer_token.h"

namespace oishell::agent::gui {

using http::ascii_iequals;
using http::HttpRequest;

RequestGuard::RequestGuard(std::string host, int port, std::string token)
    : token_(std::move(token)), origin_(host, port) {}

GuardVerdict RequestGuard::check_origin(const HttpRequest& request, bool navigation) const {
  if (http::OriginVerdict same = origin_.check(request); same.status != 0) return {same.status, same.reason};
  const std::string* origin = request.header("Origin");
  if (request.method == "POST" && !origin) return {403, "a POST must come from the page (no Origin was sent)"};
  if (!navigation) {
    const std::string* site = request.header("Sec-Fetch-Site");
    if (site && *site != "same-origin") return {403, "requests from other sites are refused"};
  }
  return {};
}

bool RequestGuard::authenticated(const HttpRequest& request) const {
  const std::string presented = http::request_token(request);  // Authorization: Bearer (or X-API-KEY)
  return http::tokens_equal(presented, token_);
}

bool RequestGuard::json_body(const HttpRequest& request) {
  const std::string* type = request.header("Content-Type");
  if (!type) return false;
  std::string_view t = std::string_view(*type).substr(0, type->find(';'));
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  return ascii_iequals(t, "application/json");
}

std::string RequestGuard::url_with_token() const {
  return origin_.origin() + "/#token=" + token_;
}

}  // namespace oishell::agent::gui
