// HTTP/1.x response heads and their framing (runtime/relay/http_response.h).
#include "runtime/relay/http_response.h"

namespace oishell::relay {
namespace {

constexpr size_t kMaxStatusLine = 8 * 1024;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

ResponseHeadParse parse_response_head(std::string_view data, size_t max_bytes) {
  ResponseHeadParse result;
  size_t eol = data.find("\r\n");
  if (eol == std::string_view::npos) {
    if (data.size() > kMaxStatusLine || data.size() >= max_bytes) {
      result.status = HeadStatus::too_large;
      result.error = "response status line too long";
    }
    return result;
  }
  std::string_view line = data.substr(0, eol);
  // "HTTP/1.1 200 OK" or "HTTP/1.1 204" (the reason may be empty, the space before it too: RFC 9112 4).
  if (line.size() < 12 || (line.substr(0, 9) != "HTTP/1.1 " && line.substr(0, 9) != "HTTP/1.0 ") ||
      !is_digit(line[9]) || !is_digit(line[10]) || !is_digit(line[11]) || line[9] == '0' ||
      (line.size() > 12 && line[12] != ' ')) {
    result.status = HeadStatus::malformed;
    result.error = "bad status line";
    return result;
  }
  for (char c : line.substr(12)) {
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
      result.status = HeadStatus::malformed;
      result.error = "control character in the status line";
      return result;
    }
  }
  // The header lines follow the same grammar as a request's: parse them with the request parser behind a
  // stand-in request line of the same version, so that both directions are held to one set of rules.
  std::string version(line.substr(0, 8));
  std::string stand_in = "GET / " + version;
  std::string rewritten = stand_in;
  rewritten.append(data.substr(eol));
  HeadParse parsed = parse_request_head(rewritten, max_bytes + stand_in.size());
  result.status = parsed.status;
  result.error = parsed.error;
  if (parsed.status != HeadStatus::complete) return result;
  result.consumed = parsed.consumed - stand_in.size() + eol;
  if (result.consumed > max_bytes) {
    result.status = HeadStatus::too_large;
    result.error = "response head larger than " + std::to_string(max_bytes) + " bytes";
    return result;
  }
  result.code = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  result.version = std::move(version);
  result.headers = std::move(parsed.head.headers);
  return result;
}

Result<ResponseFraming> response_body_framing(const ResponseHeadParse& head, std::string_view request_method) {
  ResponseFraming framing;
  // RFC 9112 6.3: these never have a body, whatever their headers say.
  if (request_method == "HEAD" || (head.code >= 100 && head.code < 200) || head.code == 204 || head.code == 304) {
    return framing;
  }
  HttpRequestHead as_request;  // request_body_framing reads only the version and the headers
  as_request.version = head.version;
  as_request.headers = head.headers;
  auto body = request_body_framing(as_request);
  if (!body) return Status::error("response framing: " + body.status().message());
  switch (body->kind) {
    case BodyKind::chunked:
      framing.kind = ResponseBody::chunked;
      break;
    case BodyKind::length:
      framing.kind = ResponseBody::length;
      framing.length = body->length;
      break;
    case BodyKind::none:
      // No framing header: a response (unlike a request) then runs until the connection closes, except a
      // declared "Content-Length: 0", which request_body_framing also reports as none.
      framing.kind = as_request.count("content-length") > 0 ? ResponseBody::none : ResponseBody::until_close;
      break;
  }
  return framing;
}

}  // namespace oishell::relay
