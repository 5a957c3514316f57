#include "runtime/mcp/http_admission.h"

#include <algorithm>

#include "base/http/bearer_token.h"
#include "runtime/mcp/server.h"

namespace oishell::mcp {
namespace {

using http::ascii_iequals;
using http::HttpRequest;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool json_content(const HttpRequest& request) {
  const std::string* type = request.header("Content-Type");
  if (!type) return false;
  return ascii_iequals(trim(std::string_view(*type).substr(0, type->find(';'))), "application/json");
}

// The credential of `Authorization: Bearer T` alone (unlike interpreter --server, no X-API-KEY).
std::string bearer(const HttpRequest& request) {
  const std::string* auth = request.header("Authorization");
  if (!auth) return "";
  std::string_view v = *auth;
  if (v.size() <= 7 || !ascii_iequals(v.substr(0, 7), "Bearer ")) return "";
  return std::string(trim(v.substr(7)));
}

}  // namespace

bool accepts(const HttpRequest& request, const std::string& media_type) {
  for (const auto& [name, value] : request.headers) {
    if (!ascii_iequals(name, "Accept")) continue;
    std::string_view rest = value;
    while (true) {
      const size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      item = trim(item.substr(0, item.find(';')));
      if (ascii_iequals(item, media_type) || item == "*/*") return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return false;
}

HttpAdmission::HttpAdmission(const std::string& host, int port, std::string token)
    : origin_(host, port), token_(std::move(token)) {}

HttpVerdict HttpAdmission::admit(const HttpRequest& request) const {
  if (http::OriginVerdict same = origin_.check(request); same.status != 0) return {same.status, same.reason};
  if (!http::tokens_equal(bearer(request), token_)) {
    return {401, request.header("Authorization") ? "the bearer token is not this server's"
                                                 : "the request carries no `Authorization: Bearer` token"};
  }
  if (request.path != kHttpEndpoint) return {404, "the MCP endpoint is " + std::string(kHttpEndpoint)};
  if (request.method == "POST") {
    if (!json_content(request)) return {415, "a POST carries one JSON-RPC message as application/json"};
    if (!accepts(request, "application/json") && !accepts(request, "text/event-stream"))
      return {406, "the client must accept application/json or text/event-stream"};
  } else if (request.method == "GET") {
    if (!accepts(request, "text/event-stream")) return {406, "a GET opens an event stream: Accept text/event-stream"};
  } else if (request.method != "DELETE") {
    return {405, "the MCP endpoint takes POST, GET and DELETE"};
  }
  if (const std::string* version = request.header("MCP-Protocol-Version")) {
    const auto& served = supported_protocol_versions();
    if (std::find(served.begin(), served.end(), *version) == served.end())
      return {400, "MCP-Protocol-Version `" + *version + "` is not one this server speaks"};
  }
  return {};
}

AnswerForm HttpAdmission::answer_form(const HttpRequest& request) {
  return accepts(request, "text/event-stream") ? AnswerForm::event_stream : AnswerForm::json;
}

std::string HttpAdmission::endpoint_url() const { return origin_.origin() + kHttpEndpoint; }

}  // namespace oishell::mcp
