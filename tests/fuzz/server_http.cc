// The agent's HTTP server requests (base/http/http_message.h) as any local user can send them to `interpreter
// --server`: parsed in pieces under the admission limits, then judged by the admission check (Host, Origin, token;
// agent/server/admission.h), then, when it asks for one, the websocket upgrade checked and answered, and a chat
// completion's body read (agent/server/oi_protocol.h).
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/server/admission.h"
#include "base/http/http_message.h"
#include "agent/server/oi_protocol.h"
#include "agent/server/websocket.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::agent::server;
using namespace oishell::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const size_t piece = 1 + input.byte();
  const std::string_view stream = input.rest();
  AdmissionPolicy policy;
  policy.token = "fuzz-token-0123456789";
  policy.origins = {"http://127.0.0.1:8000", "http://localhost:8000"};
  policy.limits = HttpLimits{4 * 1024, 32, 64 * 1024};
  HttpRequestParser parser(policy.limits);
  bool checked = false, first_message_auth = false;
  for (size_t at = 0; at < stream.size() && parser.state() == HttpRequestParser::State::need_more; at += piece) {
    parser.feed(stream.substr(at, piece));
    if (!checked && parser.head_complete() && parser.state() != HttpRequestParser::State::error) {
      checked = true;
      if (refusal(parser.request(), policy, &first_message_auth)) return 0;
    }
  }
  if (parser.state() == HttpRequestParser::State::error) {
    FUZZ_CHECK(parser.error().status >= 400 && parser.error().status < 600);
    (void)http_json_error(parser.error().status, parser.error().message);
    return 0;
  }
  if (parser.state() != HttpRequestParser::State::complete) return 0;
  const HttpRequest& request = parser.request();
  FUZZ_CHECK(request.body.size() <= policy.limits.max_body_bytes);
  if (is_websocket_upgrade(request) && !check_websocket_upgrade(request)) {
    const std::string answer = ws_handshake_response(request);
    FUZZ_CHECK(answer.starts_with("HTTP/1.1 101"));
  }
  (void)parse_chat_request(request.body);
  return 0;
}
