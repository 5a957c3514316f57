#include "base/http/http_message.h"

#include <nlohmann/json.hpp>

namespace oishell::http {
namespace {

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_tchar(c)) return false;
  }
  return true;
}

// Visible ASCII and obs-text; no controls, no space.
bool is_target(std::string_view s) {
  if (s.empty() || s.front() != '/') return false;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
  }
  return true;
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

const std::string* HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (ascii_iequals(k, name)) return &v;
  }
  return nullptr;
}

bool HttpRequest::header_has_token(std::string_view name, std::string_view token) const {
  for (const auto& [k, v] : headers) {
    if (!ascii_iequals(k, name)) continue;
    std::string_view rest = v;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      if (ascii_iequals(trim_ows(rest.substr(0, comma)), token)) return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return false;
}

HttpRequestParser::State HttpRequestParser::fail(int status, std::string message) {
  error_ = {status, std::move(message)};
  state_ = State::error;
  return state_;
}

HttpRequestParser::State HttpRequestParser::feed(std::string_view data) {
  buf_.append(data);
  if (state_ != State::need_more) return state_;
  if (!head_done_) {
    // RFC 9112 2.2: empty lines before the request line are ignored.
    size_t skip = 0;
    while (buf_.size() >= skip + 2 && buf_[skip] == '\r' && buf_[skip + 1] == '\n') skip += 2;
    if (skip > 0) buf_.erase(0, skip);
    size_t end = buf_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (buf_.size() > limits_.max_head_bytes) {
        return fail(431, "the request head is larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
      }
      return state_;
    }
    if (end + 4 > limits_.max_head_bytes) {
      return fail(431, "the request head is larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
    }
    if (parse_head(std::string_view(buf_).substr(0, end + 2)) == State::error) return state_;
    buf_.erase(0, end + 4);
    head_done_ = true;
  }
  if (buf_.size() < body_length_) return state_;
  request_.body = buf_.substr(0, body_length_);
  buf_.erase(0, body_length_);
  state_ = State::complete;
  return state_;
}

HttpRequestParser::State HttpRequestParser::parse_head(std::string_view head) {
  // `head` is every line, each with its CRLF.
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t crlf = head.find("\r\n", pos);
    std::string_view line = head.substr(pos, crlf - pos);
    if (line.find('\n') != std::string_view::npos || line.find('\r') != std::string_view::npos) {
      return fail(400, "a line of the request head is not ended by CRLF");
    }
    lines.push_back(line);
    pos = crlf + 2;
  }
  // The request line: method SP request-target SP HTTP-version.
  std::string_view rl = lines.front();
  size_t sp1 = rl.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : rl.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || rl.find(' ', sp2 + 1) != std::string_view::npos) {
    return fail(400, "the request line is not `METHOD /target HTTP/1.1`");
  }
  std::string_view method = rl.substr(0, sp1), target = rl.substr(sp1 + 1, sp2 - sp1 - 1),
                   version = rl.substr(sp2 + 1);
  if (!is_token(method)) return fail(400, "the request method is not a token");
  if (!is_target(target)) return fail(400, "the request target is not an absolute path (`/...`)");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' || version[5] < '0' ||
      version[5] > '9' || version[7] < '0' || version[7] > '9') {
    return fail(400, "the request line's HTTP version is malformed");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return fail(505, "only HTTP/1.0 and HTTP/1.1 are served");
  request_.method = method;
  request_.target = target;
  size_t q = target.find('?');
  request_.path = target.substr(0, q);
  request_.query = q == std::string_view::npos ? "" : target.substr(q + 1);
  request_.minor_version = version[7] - '0';

  if (lines.size() - 1 > limits_.max_headers) {
    return fail(431, "the request has more than " + std::to_string(limits_.max_headers) + " header fields");
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.empty()) break;  // (cannot happen: the head ends before the empty line)
    if (line.front() == ' ' || line.front() == '\t') return fail(400, "obsolete header line folding");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return fail(400, "a header line has no colon");
    std::string_view name = line.substr(0, colon);
    if (!is_token(name)) return fail(400, "a header field name is not a token (or has whitespace before the colon)");
    std::string_view value = trim_ows(line.substr(colon + 1));
    for (char c : value) {
      auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f) return fail(400, "a header field value has a control character");
    }
    request_.headers.emplace_back(std::string(name), std::string(value));
  }

  size_t hosts = 0;
  bool have_length = false;
  for (const auto& [k, v] : request_.headers) {
    if (ascii_iequals(k, "Host")) ++hosts;
    if (ascii_iequals(k, "Transfer-Encoding")) {
      return fail(501, "Transfer-Encoding is not supported in requests; send the body with Content-Length");
    }
    if (ascii_iequals(k, "Content-Length")) {
      if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos) {
        return fail(400, "Content-Length is not a number");
      }
      size_t n = std::stoull(v);
      if (have_length && n != body_length_) return fail(400, "conflicting Content-Length fields");
      have_length = true;
      body_length_ = n;
    }
  }
  if (request_.minor_version == 1 && hosts != 1) return fail(400, "an HTTP/1.1 request needs exactly one Host");
  if (hosts > 1) return fail(400, "more than one Host");
  if (body_length_ > limits_.max_body_bytes) {
    return fail(413, "the request body is larger than " + std::to_string(limits_.max_body_bytes) + " bytes");
  }
  return state_;
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 421: return "Misdirected Request";
    case 422: return "Unprocessable Content";
    case 426: return "Upgrade Required";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "";
  }
}

namespace {

std::string status_line(int status) {
  std::string_view reason = reason_phrase(status);
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason.empty() ? "Status" : reason) + "\r\n";
}

}  // namespace

std::string http_response(int status, const std::vector<std::pair<std::string, std::string>>& headers,
                          std::string_view body) {
  std::string out = status_line(status);
  for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  out.append(body);
  return out;
}

std::string http_json_error(int status, std::string_view message) {
  nlohmann::json body = {{"detail", std::string(message)}};
  return http_response(status, {{"Content-Type", "application/json"}},
                       body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

std::string http_stream_head(int status, const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out = status_line(status);
  for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
  out += "Connection: close\r\n\r\n";
  return out;
}

}  // namespace oishell::http
