// POST /openai/chat/completions: OpenAI's chat-completions API in front of the agent, as OI's server offers it.
// The request's messages are the conversation (user and assistant text; the last one the user's); the answer is
// the agent's whole response rendered as markdown (MarkdownRenderer): its messages, each code block fenced with
// its language, each block's console output fenced as ```output, streamed as chat.completion.chunk server-sent
// events ending with `data: [DONE]`, or returned whole as one chat.completion. A client that goes away stops the
// response (the model's stream and the running block), as Ctrl-C would.
#include <atomic>
#include <ctime>

#include <nlohmann/json.hpp>

#include "base/http/bearer_token.h"
#include "agent/server/context.h"
#include "agent/server/hangup_watcher.h"
#include "agent/server/lmc_display.h"
#include "agent/server/oi_protocol.h"
#include "agent/user/user_input.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)
namespace {

using nlohmann::json;

std::string openai_error(int status, const std::string& message, const std::string& type) {
  json body = {{"error", {{"message", message}, {"type", type}, {"code", json()}}}, {"detail", message}};
  return http_response(status, {{"Content-Type", "application/json"}},
                       body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

std::string sse(const json& event) {
  return "data: " + event.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

// A request cannot answer a question: with auto_run off its blocks are refused, saying so.
class RequestInput final : public UserInput {
 public:
  explicit RequestInput(LmcDisplay& display) : display_(display) {}
  std::optional<std::string> read_message(const std::string&, bool*) override { return std::nullopt; }
  std::optional<std::string> ask(const std::string&, bool*) override {
    if (!display_.take_confirmation_pending()) return std::nullopt;  // a network ask: denied
    display_.notice(NoticeLevel::warning,
                    "Not run: auto_run is off, and a chat-completions request cannot confirm code. Start the server "
                    "with auto_run on (-y), or use the websocket, whose client confirms each block (command `go`).");
    return "n";
  }
  bool can_ask() const override { return false; }

 private:
  LmcDisplay& display_;
};

}  // namespace

void serve_chat_completions(ServerContext& ctx, Connection& conn, const HttpRequest& request) {
  const std::string* type = request.header("Content-Type");
  if (type && type->find("json") == std::string::npos) {
    (void)conn.write_all(openai_error(415, "the body must be JSON (Content-Type: application/json)",
                                      "invalid_request_error"));
    return;
  }
  auto parsed = parse_chat_request(request.body);
  if (!parsed) {
    (void)conn.write_all(openai_error(400, parsed.status().message(), "invalid_request_error"));
    return;
  }
  ChatRequest& chat = *parsed;
  // Open Interpreter's control tokens (for its 01 device) change how the server answers; none of them is taken here.
  for (const char* token : {"{STOP}", "{START}", "{CONTEXT_MODE_ON}", "{CONTEXT_MODE_OFF}", "{REQUIRE_START_ON}",
                            "{REQUIRE_START_OFF}", "{AUTO_RUN_ON}", "{AUTO_RUN_OFF}"}) {
    if (chat.user_text == token) {
      (void)conn.write_all(openai_error(400, std::string("Open Interpreter's control message ") + token +
                                                 " is not supported here (auto_run is fixed when the server starts; "
                                                 "a response stops when its client disconnects)",
                                        "invalid_request_error"));
      return;
    }
  }
  if (!ctx.parts.llm) {
    (void)conn.write_all(openai_error(503, "no language model is configured for this server (start it with --model, "
                                           "or a profile)", "server_error"));
    return;
  }
  const std::string id = "chatcmpl-" + generate_token().substr(0, 24);
  const long created = static_cast<long>(std::time(nullptr));
  MarkdownRenderer renderer;
  std::string whole;
  bool stopped = false;
  bool first = true;
  auto stop = [&] {
    if (stopped) return;
    stopped = true;
    ctx.stop_agent();
  };
  if (chat.stream) {
    if (conn.write_all(http_stream_head(200, {{"Content-Type", "text/event-stream"},
                                              {"Cache-Control", "no-cache"}})) != IoResult::ok) {
      return;
    }
  }
  std::atomic<bool> gone{false};  // the client hung up (set by the HangupWatcher's thread)
  Agent* agent_ptr = nullptr;
  LmcDisplay display(
      [&](const json& chunk) {
        // Once the client is gone, the turn that was stopped is the last: the model is not asked again.
        if ((gone.load() || stopped) && agent_ptr) agent_ptr->config().max_turns = 1;
        std::string text = renderer.feed(chunk);
        if (text.empty()) return;
        if (!chat.stream) {
          whole += text;
          return;
        }
        if (conn.write_all(sse(completion_chunk(id, chat.model, created, text, first, false))) != IoResult::ok) {
          stop();
        }
        first = false;
      },
      nullptr);
  RequestInput input(display);
  auto agent = ctx.make_agent(&display, &input, std::move(chat.history));
  agent_ptr = agent.get();
  {
    HangupWatcher watcher(conn.fd(), [&ctx, &gone] {
      gone.store(true);
      ctx.stop_agent();
    });
    agent->respond(chat.user_text);
    if (watcher.fired()) stopped = true;
  }
  agent.reset();
  if (stopped) {
    ctx.settle();
    return;
  }
  if (chat.stream) {
    (void)conn.write_all(sse(completion_chunk(id, chat.model, created, std::nullopt, first, true)) +
                         "data: [DONE]\n\n");
    return;
  }
  (void)conn.write_all(http_response(200, {{"Content-Type", "application/json"}},
                                     completion(id, chat.model, created, whole).dump(
                                         -1, ' ', false, json::error_handler_t::replace) + "\n"));
}

}  // namespace oishell::agent::server
