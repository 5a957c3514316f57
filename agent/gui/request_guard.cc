#include "agent/gui/request_guard.h"

#include "agent/server/auth.h"
#include "base/percent_encoding.h"

namespace oishell::agent::gui {

using server::ascii_iequals;
using server::HttpRequest;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string> cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    size_t semi = header.find(';');
    std::string_view pair = trim(header.substr(0, semi));
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    if (trim(pair.substr(0, eq)) == name) return std::string(trim(pair.substr(eq + 1)));
  }
  return std::nullopt;
}

std::optional<std::string> query_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = pair.find('=');
    if (percent_decoded(pair.substr(0, eq), true) != name) continue;
    return eq == std::string_view::npos ? std::string() : percent_decoded(pair.substr(eq + 1), true);
  }
  return std::nullopt;
}

RequestGuard::RequestGuard(std::string host, int port, std::string token)
    : host_(std::move(host)), token_(std::move(token)), cookie_name_("oishell_gui_" + std::to_string(port)),
      port_(port) {
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

bool RequestGuard::authenticated(const HttpRequest& request, bool query_allowed) const {
  bool ok = false;
  // Every source is compared, each in constant time: which one matched is not timed either.
  if (const std::string* cookies = request.header("Cookie")) {
    if (auto v = cookie_value(*cookies, cookie_name_)) ok |= server::tokens_equal(*v, token_);
  }
  std::string bearer = server::request_token(request);
  if (!bearer.empty()) ok |= server::tokens_equal(bearer, token_);
  if (query_allowed) {
    if (auto v = query_value(request.query, "token")) ok |= server::tokens_equal(*v, token_);
  }
  return ok;
}

bool RequestGuard::json_body(const HttpRequest& request) {
  const std::string* type = request.header("Content-Type");
  if (!type) return false;
  std::string_view t = trim(std::string_view(*type).substr(0, type->find(';')));
  return ascii_iequals(t, "application/json");
}

std::string RequestGuard::set_cookie() const {
  return cookie_name_ + "=" + token_ + "; Path=/; HttpOnly; SameSite=Strict";
}

std::string RequestGuard::url_with_token() const {
  return "http://" + allowed_hosts_[0] + "/?token=" + token_;
}

}  // namespace oishell::agent::gui
