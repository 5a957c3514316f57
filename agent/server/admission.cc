#include "agent/server/admission.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <nlohmann/json.hpp>

#include "base/http/bearer_token.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kSliceMs = 100;        // how often a waiting admission looks whether it was cut off or the server stops
constexpr int kAnswerTimeoutMs = 1000;  // writing a refusal: a client that does not read it is not waited for

std::string json_text(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

// "127.0.0.1:8000" -> "127.0.0.1"; "[::1]:8000" -> "::1".
std::string host_without_port(const std::string& host) {
  if (!host.empty() && host.front() == '[') {
    size_t close = host.find(']');
    return close == std::string::npos ? host : host.substr(1, close - 1);
  }
  size_t colon = host.find(':');
  return colon == std::string::npos ? host : host.substr(0, colon);
}

enum class Got { data, deadline, gone };

// Reads what arrives before `deadline` in slices, so that a cut-off or a stop is seen within kSliceMs.
Got read_until(Connection& conn, std::string* out, Clock::time_point deadline, const std::atomic<bool>& cut,
               const std::atomic<bool>& stopping) {
  while (true) {
    if (cut.load() || stopping.load()) return Got::gone;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Got::deadline;
    IoResult r = conn.read_some(out, static_cast<int>(std::min<long>(left, kSliceMs)));
    if (r == IoResult::ok) return Got::data;
    if (r != IoResult::timeout) return Got::gone;
  }
}

// Answers a refusal and ends the connection without a reset: what the client still sends (the rest of a refused
// body or head) is read and dropped for a moment after our end is shut, since closing a socket with unread data
// sends a reset, which can destroy the answer before the client reads it.
void answer(Connection& conn, std::string_view response) {
  if (conn.write_all(response, kAnswerTimeoutMs) != IoResult::ok) return;
  conn.shutdown_write();
  const auto until = Clock::now() + std::chrono::milliseconds(kAnswerTimeoutMs);
  size_t dropped = 0;
  while (dropped < 1024 * 1024) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    std::string scratch;
    if (left <= 0 || conn.read_some(&scratch, static_cast<int>(left)) != IoResult::ok) return;
    dropped += scratch.size();
  }
}

// Signals stay with the agent's thread, as before this file's threads existed (SIGINT's handler is thread-safe,
// but SIGTERM's raise() would send the SIGINT to whichever thread took it).
void keep_signals_away() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

WsLimits session_ws_limits() {
  WsLimits limits;
  limits.max_frame_bytes = 1024 * 1024;
  limits.max_message_bytes = 2 * 1024 * 1024;
  return limits;
}

}  // namespace

std::vector<std::string> own_origins(const Listener& listener) {
  const std::string port = std::to_string(listener.port);
  return {listener.url(), "http://localhost:" + port};
}

std::vector<std::string> with_configured_origins(std::vector<std::string> origins, const std::string& configured) {
  size_t at = 0;
  while (at < configured.size()) {
    size_t end = configured.find_first_of(", ", at);
    if (end == std::string::npos) end = configured.size();
    std::string origin = configured.substr(at, end - at);
    while (!origin.empty() && origin.back() == '/') origin.pop_back();
    if (!origin.empty()) origins.push_back(origin);
    at = end + 1;
  }
  return origins;
}

std::optional<std::string> refusal(const HttpRequest& req, const AdmissionPolicy& policy, bool* first_message_auth) {
  *first_message_auth = false;
  // DNS rebinding: a page of another site that has its name resolve to 127.0.0.1 sends that name as Host.
  if (const std::string* host = req.header("Host"); host && !is_loopback_host(host_without_port(*host))) {
    return http_json_error(421, "Host must name this machine's loopback address");
  }
  // A browser names the page a request comes from. Another loopback port is another program's page (a dev server,
  // a notebook), and `null` is what sandboxed iframes, file: pages and redirects send: neither is this server's.
  if (const std::string* origin = req.header("Origin")) {
    bool allowed = std::any_of(policy.origins.begin(), policy.origins.end(),
                               [&](const std::string& o) { return ascii_iequals(o, *origin); });
    if (!allowed) {
      return http_json_error(403, "requests from pages of other origins are refused (Origin: " + *origin +
                                      "); allow one with INTERPRETER_ALLOWED_ORIGINS");
    }
  }
  const bool upgrade = is_websocket_upgrade(req);
  const std::string token = request_token(req);
  // A websocket without a credential in its headers (a browser cannot set them) authenticates with its first
  // message; every other request carries it.
  if (upgrade && token.empty()) {
    *first_message_auth = true;
    return std::nullopt;
  }
  if (!tokens_equal(token, policy.token)) {
    return http_response(401, {{"Content-Type", "application/json"}, {"WWW-Authenticate", "Bearer"}},
                         json_text({{"detail", "Authentication failed: send the server's token as X-API-KEY or "
                                               "Authorization: Bearer"}}));
  }
  return std::nullopt;
}

Admissions::Admissions(AdmissionPolicy policy)
    : policy_(std::move(policy)),
      ready_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE)),
      stop_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Admissions::~Admissions() {
  stopping_.store(true);
  uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof one);
  if (acceptor_.joinable()) acceptor_.join();
  std::list<Slot> slots;
  {
    std::lock_guard lock(mu_);
    slots.swap(slots_);
  }
  for (Slot& s : slots) {
    if (s.thread.joinable()) s.thread.join();
  }
}

void Admissions::reap() {
  for (auto it = slots_.begin(); it != slots_.end();) {
    if (it->done.load()) {
      it->thread.join();
      it = slots_.erase(it);
    } else {
      ++it;
    }
  }
}

void Admissions::start_accepting(int listen_fd) {
  acceptor_ = std::thread([this, listen_fd] {
    keep_signals_away();
    while (!stopping_.load()) {
      pollfd fds[2] = {{listen_fd, POLLIN, 0}, {stop_.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
      if (fds[1].revents) return;
      if (!(fds[0].revents & POLLIN)) continue;
      if (UniqueFd client = accept_connection(listen_fd)) {
        add(std::move(client));
      } else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // The pending connection stays queued and poll says readable at once: wait for descriptors to come back
        // (the admissions under way end within their deadline) instead of spinning.
        pollfd stop{stop_.get(), POLLIN, 0};
        (void)::poll(&stop, 1, 100);
      }
    }
  });
}

void Admissions::add(UniqueFd fd) {
  std::lock_guard lock(mu_);
  reap();
  size_t running = 0;
  for (Slot& s : slots_) running += s.cut.load() ? 0 : 1;
  if (running >= kMaxAdmitting) {
    for (Slot& s : slots_) {  // the oldest still running: it has had the longest to send its request
      if (!s.cut.exchange(true)) break;
    }
  }
  // Cut-off threads end within a poll slice; a flood of connections meanwhile is closed unanswered rather than
  // given threads without bound.
  if (slots_.size() >= 2 * kMaxAdmitting) return;
  Slot& slot = slots_.emplace_back();
  slot.thread = std::thread([this, raw = fd.release(), s = &slot] {
    keep_signals_away();
    admit(UniqueFd(raw), s);
    s->done.store(true);
  });
}

std::optional<Admitted> Admissions::take() {
  std::lock_guard lock(mu_);
  if (admitted_.empty()) return std::nullopt;
  uint64_t one = 0;
  (void)!::read(ready_.get(), &one, sizeof one);
  Admitted next = std::move(admitted_.front());
  admitted_.pop_front();
  return next;
}

void Admissions::admit(UniqueFd fd, Slot* slot) {
  auto conn = std::make_unique<Connection>(std::move(fd), -1);
  HttpRequestParser parser(policy_.limits);
  const auto deadline = Clock::now() + policy_.request_timeout;
  bool checked = false, first_message_auth = false;
  while (parser.state() == HttpRequestParser::State::need_more) {
    std::string data;
    Got got = read_until(*conn, &data, deadline, slot->cut, stopping_);
    if (got == Got::deadline) return answer(*conn, http_json_error(408, "the request did not arrive in time"));
    if (got == Got::gone) return;  // closed, reset, cut off or the server stops
    parser.feed(data);
    if (checked || !parser.head_complete() || parser.state() == HttpRequestParser::State::error) continue;
    // The head decides: a client without the token gets no further than 16 KiB of head, its body never read.
    checked = true;
    if (auto refused = refusal(parser.request(), policy_, &first_message_auth)) return answer(*conn, *refused);
    // curl asks before sending a larger body; it would otherwise wait a second.
    if (parser.state() == HttpRequestParser::State::need_more &&
        parser.request().header_has_token("Expect", "100-continue")) {
      (void)conn->write_all("HTTP/1.1 100 Continue\r\n\r\n", kAnswerTimeoutMs);
    }
  }
  if (parser.state() == HttpRequestParser::State::error) {
    return answer(*conn, http_json_error(parser.error().status, parser.error().message));
  }
  Admitted a;
  a.frames = WsFrameParser(session_ws_limits());
  const HttpRequest& req = parser.request();
  if (is_websocket_upgrade(req)) {
    if (req.path != "/") return answer(*conn, http_json_error(404, "the websocket is at /"));
    if (auto bad = check_websocket_upgrade(req)) {
      std::vector<std::pair<std::string, std::string>> headers = {{"Content-Type", "application/json"}};
      if (bad->status == 426) headers.emplace_back("Sec-WebSocket-Version", "13");
      return answer(*conn, http_response(bad->status, headers, json_text({{"detail", bad->message}})));
    }
    if (conn->write_all(ws_handshake_response(req), kAnswerTimeoutMs) != IoResult::ok) return;
    a.websocket = true;
    a.frames.feed(parser.take_leftover());
    if (first_message_auth) {
      const auto auth_deadline = Clock::now() + policy_.auth_timeout;
      auto refuse = [&] {
        answer(*conn, ws_encode_frame(WsOpcode::text, json({{"auth", false}}).dump()) +
                          ws_encode_close(ws_close::policy_violation, "authentication failed"));
      };
      bool authenticated = false;
      while (!authenticated) {
        std::optional<WsEvent> ev = a.frames.next();
        if (!ev) {
          std::string data;
          Got got = read_until(*conn, &data, auth_deadline, slot->cut, stopping_);
          if (got == Got::deadline) return refuse();
          if (got == Got::gone) return;
          a.frames.feed(data);
          continue;
        }
        switch (ev->kind) {
          case WsEvent::Kind::ping:
            (void)conn->write_all(ws_encode_frame(WsOpcode::pong, ev->payload), kAnswerTimeoutMs);
            break;
          case WsEvent::Kind::pong:
            break;
          case WsEvent::Kind::close:
            (void)conn->write_all(ws_encode_close(ws_close::normal, ""), kAnswerTimeoutMs);
            return;
          case WsEvent::Kind::error:
            (void)conn->write_all(ws_encode_close(ev->close_code, ev->payload), kAnswerTimeoutMs);
            return;
          case WsEvent::Kind::binary:
            return refuse();
          case WsEvent::Kind::text: {
            json j = json::parse(ev->payload, nullptr, /*allow_exceptions=*/false);
            auto it = j.is_object() ? j.find("auth") : j.end();
            if (!j.is_object() || it == j.end() || !it->is_string() ||
                !tokens_equal(it->get<std::string>(), policy_.token)) {
              return refuse();
            }
            if (conn->write_all(ws_encode_frame(WsOpcode::text, json({{"auth", true}}).dump()),
                                kAnswerTimeoutMs) != IoResult::ok) {
              return;
            }
            authenticated = true;
            break;
          }
        }
      }
    }
  }
  a.conn = std::move(conn);
  a.parser = std::move(parser);
  {
    std::lock_guard lock(mu_);
    if (admitted_.size() < kMaxWaiting) {
      admitted_.push_back(std::move(a));
      uint64_t one = 1;
      (void)!::write(ready_.get(), &one, sizeof one);
      return;
    }
  }
  (void)a.conn->write_all(a.websocket ? ws_encode_close(ws_close::going_away, "the server is busy; try again")
                                      : http_json_error(503, "the server is busy; try again"),
                          kAnswerTimeoutMs);
}

}  // namespace oishell::agent::server
