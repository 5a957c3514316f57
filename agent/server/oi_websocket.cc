// The websocket endpoint: Open Interpreter's LMC protocol, one conversation per connection.
//
// The handshake and the credential were checked before (admission.h: {"auth": TOKEN} first unless the handshake
// carried the token). Client to server: LMC chunks, e.g.
//   {"role":"user","type":"message","start":true} {"role":"user","type":"message","content":"hi"}
//   {"role":"user","type":"message","end":true}
// which start a response; {"role":"user","type":"command","content":"go"} (with start/end) approves the block
// waiting for confirmation and "stop" stops what runs, as does a new message's start. {"ack": ID} is accepted and
// ignored. Server to client: LMC chunks (lmc_display.h), then {"role":"server","type":"status","content":"complete"}
// after each response (and before a confirmation is awaited, as OI does); a bad chunk gets
// {"role":"server","type":"error","content":...} and the complete status. Binary messages are refused the same way.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>

#include <nlohmann/json.hpp>

#include "agent/server/context.h"
#include "agent/server/hangup_watcher.h"
#include "agent/server/lmc_display.h"
#include "agent/server/oi_protocol.h"
#include "agent/server/websocket.h"
#include "base/http/bearer_token.h"
#include "agent/user/user_input.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)
namespace {

using nlohmann::json;

constexpr size_t kMaxQueued = 4096;    // messages received and not yet handled
constexpr size_t kMaxQueuedBytes = 8 * 1024 * 1024;  // their bytes since the queue was last empty

class WsSession {
 public:
  // `frames`: what the client sent after its credential, and the limits for what follows.
  WsSession(ServerContext& ctx, Connection& conn, WsFrameParser frames)
      : ctx_(ctx), conn_(conn), parser_(std::move(frames)) {}

  void run();

  // For the agent's display and input.
  void send(const json& chunk);
  // Looks at what the client sent without waiting: answers pings, notes a close, and queues messages; a stop
  // command, a new message's start or the client leaving stops what the agent runs.
  void poll_client();
  // A confirmation: OI's client is told the response is complete, then answers `go` (run) or anything else.
  std::optional<std::string> await_confirmation(bool* interrupted);

 private:
  enum class Wait { message, closed };
  // Reads until a message is queued or the connection ends. timeout_ms -1: as long as it takes.
  Wait wait_message(int timeout_ms);
  // Parses what arrived; false once the connection is over.
  bool drain_frames();
  void close(uint16_t code, const std::string& reason);
  void send_error(const std::string& text) {
    send(lmc_error(text));
    send(lmc_complete());
  }
  void handle(const json& chunk);

  ServerContext& ctx_;
  Connection& conn_;
  WsFrameParser parser_;
  bool closed_ = false;
  bool busy_ = false;           // the agent is responding
  bool stop_requested_ = false;  // this response was stopped by the client
  std::deque<json> queue_;       // messages received and not yet handled
  size_t queued_bytes_ = 0;
  std::atomic<bool> gone_{false};  // the client hung up (set by the HangupWatcher's thread)
  LmcAccumulator accumulator_;
  std::unique_ptr<Agent> agent_;
  std::unique_ptr<LmcDisplay> display_;
};

class WsInput final : public UserInput {
 public:
  WsInput(WsSession& session, LmcDisplay& display) : session_(session), display_(display) {}
  std::optional<std::string> read_message(const std::string&, bool*) override { return std::nullopt; }
  std::optional<std::string> ask(const std::string&, bool* interrupted) override {
    // Only code confirmations are asked over the websocket; a network `ask` from the sandbox is denied.
    if (!display_.take_confirmation_pending()) return std::nullopt;
    return session_.await_confirmation(interrupted);
  }
  bool can_ask() const override { return true; }

 private:
  WsSession& session_;
  LmcDisplay& display_;
};

void WsSession::send(const json& chunk) {
  if (closed_ || conn_.broken()) return;
  std::string text = chunk.dump(-1, ' ', false, json::error_handler_t::replace);
  if (conn_.write_all(ws_encode_frame(WsOpcode::text, text)) != IoResult::ok) {
    closed_ = true;
    if (busy_ && !stop_requested_) {
      stop_requested_ = true;
      ctx_.stop_agent();
    }
  }
}

void WsSession::close(uint16_t code, const std::string& reason) {
  if (!closed_) (void)conn_.write_all(ws_encode_close(code, reason), 2000);
  closed_ = true;
}

bool WsSession::drain_frames() {
  while (!closed_) {
    if (queue_.empty()) queued_bytes_ = 0;
    if (queue_.size() >= kMaxQueued || queued_bytes_ > kMaxQueuedBytes) {
      close(ws_close::policy_violation, "too many messages sent while the agent was busy");
      break;
    }
    auto ev = parser_.next();
    if (!ev) return true;
    switch (ev->kind) {
      case WsEvent::Kind::ping:
        (void)conn_.write_all(ws_encode_frame(WsOpcode::pong, ev->payload));
        break;
      case WsEvent::Kind::pong:
        break;
      case WsEvent::Kind::close:
        close(ws_close::normal, "");
        break;
      case WsEvent::Kind::error:
        close(ev->close_code, ev->payload);
        break;
      case WsEvent::Kind::binary:
        queue_.push_back(json::binary({}));  // refused when handled
        break;
      case WsEvent::Kind::text: {
        queued_bytes_ += ev->payload.size();
        json j = json::parse(ev->payload, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded()) j = json("\x01not json");  // marks bad JSON for handle()
        queue_.push_back(std::move(j));
        break;
      }
    }
  }
  return false;
}

WsSession::Wait WsSession::wait_message(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  while (queue_.empty()) {
    if (!drain_frames()) return Wait::closed;
    if (!queue_.empty()) break;
    int wait = -1;
    if (timeout_ms >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return Wait::closed;
      wait = static_cast<int>(left.count());
    }
    std::string data;
    IoResult r = conn_.read_some(&data, wait);
    if (r == IoResult::woken) {
      if (ctx_.signalled()) {
        close(ws_close::going_away, "the server is stopping");
        return Wait::closed;
      }
      ctx_.settle();  // a stop the server asked for: not ours to end on
      continue;
    }
    if (r == IoResult::timeout) return Wait::closed;
    if (r != IoResult::ok) {
      closed_ = true;
      return Wait::closed;
    }
    parser_.feed(data);
  }
  return Wait::message;
}

void WsSession::poll_client() {
  if (closed_) return;
  while (true) {
    std::string data;
    IoResult r = conn_.read_some(&data, 0);
    if (r == IoResult::ok) {
      parser_.feed(data);
      continue;
    }
    if (r == IoResult::closed || r == IoResult::error) closed_ = true;
    break;
  }
  size_t before = queue_.size();
  drain_frames();
  bool stop = closed_;
  for (size_t i = before; i < queue_.size(); ++i) {
    const json& j = queue_[i];
    // (A client's JSON: a field of the wrong type reads as absent here, and gets its error when handled.)
    if (lmc_true(j, "start") || (lmc_string(j, "type") == "command" && lmc_string(j, "content") == "stop")) {
      stop = true;
    }
  }
  if (stop && busy_ && !stop_requested_) {
    stop_requested_ = true;
    ctx_.stop_agent();
  }
}

std::optional<std::string> WsSession::await_confirmation(bool* interrupted) {
  send(lmc_complete());
  while (true) {
    if (wait_message(-1) == Wait::closed) {
      *interrupted = true;
      return std::nullopt;
    }
    json j = queue_.front();
    if (j.is_object() && j.contains("start") && lmc_string(j, "type") != "command") {
      return "n";  // a new message instead of `go`: the block is not run; the message is handled next (queued)
    }
    queue_.pop_front();
    if (!j.is_object()) continue;
    LmcStep step = accumulator_.feed(j);
    if (step.kind == LmcStep::Kind::command) {
      if (step.message.content == "go") return "y";
      if (step.message.content == "stop") {
        *interrupted = true;
        return std::nullopt;
      }
      return "n";
    }
    if (step.kind == LmcStep::Kind::user_message) {
      queue_.push_front({{"role", "user"}, {"type", "message"}, {"content", step.message.content}, {"end", true}});
      queue_.push_front({{"role", "user"}, {"type", "message"}, {"start", true}});
      return "n";
    }
  }
}

void WsSession::handle(const json& chunk) {
  if (chunk.is_binary()) {
    send_error("binary messages are not supported; send LMC chunks as JSON text");
    return;
  }
  if (chunk.is_string()) {
    send_error("a message that is not JSON: send LMC chunks such as {\"role\": \"user\", \"type\": \"message\", "
               "\"start\": true}");
    return;
  }
  if (chunk.is_object() && chunk.contains("ack")) return;  // INTERPRETER_REQUIRE_ACKNOWLEDGE's answers: not needed
  if (chunk.is_object() && chunk.contains("auth")) {
    send({{"auth", true}});  // already authenticated (by the handshake's header)
    return;
  }
  LmcStep step = accumulator_.feed(chunk);
  switch (step.kind) {
    case LmcStep::Kind::more:
      return;
    case LmcStep::Kind::error:
      send_error(step.error);
      return;
    case LmcStep::Kind::command:
      if (step.message.content == "go") send_error("no code is waiting for confirmation");
      // "stop" with nothing running: nothing to do (as OI)
      return;
    case LmcStep::Kind::other_message:
      agent_->append(step.message);  // context for the next answer (OI keeps it too)
      return;
    case LmcStep::Kind::user_message:
      break;
  }
  if (!agent_->llm()) {
    send_error("no language model is configured for this server (start it with --model, or a profile)");
    return;
  }
  busy_ = true;
  stop_requested_ = false;
  {
    HangupWatcher watcher(conn_.fd(), [this] {
      gone_.store(true);
      ctx_.stop_agent();
    });
    agent_->respond(step.message.content);
    if (watcher.fired()) {
      stop_requested_ = true;
      closed_ = true;
    }
  }
  busy_ = false;
  if (stop_requested_) ctx_.settle();
  send(lmc_complete());
}

void WsSession::run() {
  display_ = std::make_unique<LmcDisplay>([this](const json& c) {
    send(c);
    poll_client();
    // Once the client is gone, the turn that was stopped is the last: the model is not asked again.
    if ((closed_ || gone_.load()) && agent_) agent_->config().max_turns = 1;
  }, [this] { poll_client(); });
  WsInput input(*this, *display_);
  agent_ = ctx_.make_agent(display_.get(), &input, {});
  while (!closed_ && !ctx_.signalled()) {
    if (wait_message(-1) == Wait::closed) break;
    json chunk = std::move(queue_.front());
    queue_.pop_front();
    handle(chunk);
  }
  if (ctx_.signalled()) close(ws_close::going_away, "the server is stopping");
  agent_.reset();
}

}  // namespace

void serve_websocket(ServerContext& ctx, Connection& conn, WsFrameParser frames) {
  WsSession session(ctx, conn, std::move(frames));
  session.run();
}

}  // namespace oishell::agent::server
