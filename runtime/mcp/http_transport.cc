#include "runtime/mcp/http_transport.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "base/http/bearer_token.h"
#include "base/json_rpc.h"

namespace oishell::mcp {
namespace {

using nlohmann::json;
using http::HttpRequest;
using http::IoResult;
using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr int kReadTimeoutMs = 10000;   // a client that stops sending its request mid-way
constexpr int kWriteTimeoutMs = 10000;  // a client that stops reading its stream
constexpr size_t kMaxConnections = 64;
constexpr int kLingerMs = 1000;         // after a refusal, reading what the client still sends
// JSON-RPC's code for errors of the transport itself (the SDK's servers answer with the same).
constexpr int kTransportError = -32000;

std::string dump(const json& message) { return message.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse_event(const json& message) { return "event: message\ndata: " + dump(message) + "\n\n"; }

Status make_pipe(UniqueFd* read_end, UniqueFd* write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2");
  read_end->reset(fds[0]);
  write_end->reset(fds[1]);
  return Status::ok();
}

void signal_fd(int fd) {
  const uint64_t one = 1;
  while (::write(fd, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

}  // namespace

// One client connection: its request, and for a POST of a request or a GET, the stream its answers go on.
struct HttpTransport::Stream {
  Stream(UniqueFd fd, int stop_fd) : connection(std::move(fd), stop_fd), wake(::eventfd(0, EFD_CLOEXEC)) {}
  http::Connection connection;
  UniqueFd wake;  // readable: the answer arrived, or the stream broke
  std::mutex mutex;
  AnswerForm form = AnswerForm::event_stream;
  bool streaming = false;  // the event stream's head is out: events may follow
  bool broken = false;     // a write failed: the client is gone
  bool answered = false;   // the response to its request went out (or is in json_answer)
  bool cancelled = false;  // the client cancelled its request: no response will come, the stream ends
  json request_id;         // the request it carries (null for GET)
  std::string json_answer; // AnswerForm::json: the response
  std::vector<std::string> progress_keys;
};

namespace {

// Sends one server message on a stream. False when it cannot take it (broken, or a JSON answer that takes only
// its response).
bool deliver(HttpTransport::Stream& s, const json& message, bool response) {
  std::lock_guard lock(s.mutex);
  if (s.broken) return false;
  if (s.form == AnswerForm::json) {
    if (!response) return false;
    s.json_answer = dump(message);
    s.answered = true;
    signal_fd(s.wake.get());
    return true;
  }
  if (!s.streaming) return false;
  if (s.connection.write_all(sse_event(message), kWriteTimeoutMs) != IoResult::ok) {
    s.broken = true;
    signal_fd(s.wake.get());
    return false;
  }
  if (response) {
    s.answered = true;
    signal_fd(s.wake.get());
  }
  return true;
}

}  // namespace

HttpTransport::HttpTransport(http::Listener listener, std::string token, size_t max_body_bytes,
                             std::function<void(const std::string&)> log)
    : listener_(std::move(listener)),
      admission_(listener_.host, listener_.port, std::move(token)),
      max_body_bytes_(max_body_bytes),
      log_(std::move(log)) {}

HttpTransport::~HttpTransport() {
  stopping_ = true;
  end_session();
  if (stop_write_) signal_fd(stop_write_.get());
  from_server_write_.reset();  // the router reads the end of the server's output
  if (acceptor_.joinable()) acceptor_.join();
  if (router_.joinable()) router_.join();
  std::unique_lock lock(mutex_);
  connections_done_.wait(lock, [&] { return active_connections_ == 0; });
}

Status HttpTransport::start() {
  if (Status s = make_pipe(&to_server_read_, &to_server_write_); !s) return s;
  if (Status s = make_pipe(&from_server_read_, &from_server_write_); !s) return s;
  if (Status s = make_pipe(&stop_read_, &stop_write_); !s) return s;
  // A signal handler writes to stop_write_: it must never block there.
  if (::fcntl(stop_write_.get(), F_SETFL, O_NONBLOCK) != 0) return Status::from_errno(errno, "fcntl(O_NONBLOCK)");
  acceptor_ = std::thread([this] { accept_loop(); });
  router_ = std::thread([this] { route_loop(); });
  return Status::ok();
}

// ---- connections ----

void HttpTransport::accept_loop() {
  while (true) {
    pollfd fds[2] = {{listener_.fd.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      if (log_) log_("poll on the listener failed (" + std::to_string(errno) + "); the session ends");
      break;
    }
    if (fds[1].revents) break;
    UniqueFd fd = http::accept_connection(listener_.fd.get());
    if (!fd) continue;
    // An event goes out as soon as it is written, not held back for the previous one's ACK (Nagle).
    const int one = 1;
    (void)::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto stream = std::make_shared<Stream>(std::move(fd), stop_read_.get());
    {
      std::lock_guard lock(mutex_);
      if (active_connections_ >= kMaxConnections) {
        (void)stream->connection.write_all(
            http::http_response(503, {{"Content-Type", "application/json"}}, "{\"error\":\"too many connections\"}"),
            1000);
        continue;
      }
      ++active_connections_;
    }
    std::thread([this, stream] {
      serve_connection(stream);
      stream->connection.shutdown_write();
      std::lock_guard lock(mutex_);
      --active_connections_;
      connections_done_.notify_all();
    }).detach();
  }
  end_session();  // stopped (a signal, or the transport's end): the server's serve() returns
}

void HttpTransport::refuse(const std::shared_ptr<Stream>& stream, const HttpVerdict& verdict, const json& id) {
  int code = kTransportError;
  if (verdict.status == 400 && verdict.reason.starts_with("parse error")) code = rpc::error::parse_error;
  else if (verdict.status == 400 || verdict.status == 413) code = rpc::error::invalid_request;
  Headers headers = {{"Content-Type", "application/json"}};
  if (verdict.status == 401) headers.push_back({"WWW-Authenticate", "Bearer realm=\"oishell mcp\""});
  if (verdict.status == 405) headers.push_back({"Allow", "GET, POST, DELETE"});
  const json body = {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", verdict.reason}}}};
  (void)stream->connection.write_all(http::http_response(verdict.status, headers, dump(body) + "\n"), kWriteTimeoutMs);
  if (log_ && verdict.status != 404) log_("refused a request: " + std::to_string(verdict.status) + " " + verdict.reason);
  // What the client still sends (a body refused from its head) is read and dropped for a moment, so that closing
  // with unread data (a reset) does not destroy the answer before the client reads it.
  stream->connection.shutdown_write();
  std::string ignored;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kLingerMs);
  while (std::chrono::steady_clock::now() < until) {
    ignored.clear();
    if (stream->connection.read_some(&ignored, kLingerMs) != IoResult::ok) break;
  }
}

void HttpTransport::serve_connection(std::shared_ptr<Stream> stream) {
  http::HttpRequestParser parser(http::HttpLimits{16 * 1024, 64, max_body_bytes_});
  std::string chunk;
  while (parser.state() == http::HttpRequestParser::State::need_more) {
    chunk.clear();
    if (stream->connection.read_some(&chunk, kReadTimeoutMs) != IoResult::ok) return;
    parser.feed(chunk);
  }
  if (parser.state() == http::HttpRequestParser::State::error) {
    return refuse(stream, {parser.error().status, parser.error().message});
  }
  const HttpRequest& request = parser.request();
  if (HttpVerdict verdict = admission_.admit(request); verdict.status != 0) return refuse(stream, verdict);
  if (request.method == "POST") return handle_post(stream, request);
  if (HttpVerdict verdict = check_session(request); verdict.status != 0) return refuse(stream, verdict);
  if (request.method == "GET") return handle_get(stream);
  // DELETE: the session ends; what runs is stopped and the sandbox torn down as the server ends.
  end_session();
  (void)stream->connection.write_all(http::http_response(200, {}, ""), kWriteTimeoutMs);
}

HttpVerdict HttpTransport::check_session(const HttpRequest& request) {
  const std::string* presented = request.header("Mcp-Session-Id");
  std::lock_guard lock(mutex_);
  if (session_id_.empty()) return {400, "no session is open: the first request is initialize"};
  if (!presented) return {400, "the request carries no Mcp-Session-Id"};
  if (session_ended_ || !http::tokens_equal(*presented, session_id_)) return {404, "no such session"};
  return {};
}

void HttpTransport::handle_post(const std::shared_ptr<Stream>& stream, const HttpRequest& request) {
  json message = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) return refuse(stream, {400, "parse error: the body is not JSON"});
  if (!message.is_object())
    return refuse(stream, {400, "a POST carries one JSON-RPC message, an object (batches are not served)"});
  const bool has_method = message.contains("method") && message["method"].is_string();
  const bool is_request = has_method && message.contains("id");
  const bool initialize = has_method && message["method"] == "initialize";
  const json id = is_request ? message["id"] : json(nullptr);
  std::string session;
  if (initialize) {
    if (!is_request) return refuse(stream, {400, "initialize is a request: it needs an id"});
    std::vector<json> abandoned;
    bool ended;
    {
      std::lock_guard lock(mutex_);
      ended = session_ended_;
      if (!ended) {
        if (!session_id_.empty()) abandoned = end_previous_client();
        session_id_ = http::generate_token();
        session = session_id_;
      }
    }
    if (ended) return refuse(stream, {404, "the session has ended: the server is stopping"}, id);
    for (const json& request_id : abandoned) {
      (void)to_server({{"jsonrpc", "2.0"},
                       {"method", "notifications/cancelled"},
                       {"params", {{"requestId", request_id}, {"reason", "a new client took over the session"}}}});
    }
  } else if (HttpVerdict verdict = check_session(request); verdict.status != 0) {
    return refuse(stream, verdict, id);
  }

  if (!is_request) {  // a notification, or a response to the server's elicitation
    if (!to_server(message)) return refuse(stream, {404, "no such session"});
    if (has_method && message["method"] == "notifications/cancelled") end_cancelled_stream(message);
    (void)stream->connection.write_all(http::http_response(202, {}, ""), kWriteTimeoutMs);
    return;
  }

  stream->form = HttpAdmission::answer_form(request);
  stream->request_id = id;
  const std::string key = dump(id);
  bool duplicate = false;
  {
    std::lock_guard lock(mutex_);
    duplicate = by_request_.count(key) > 0;
  }
  if (duplicate) return refuse(stream, {400, "a request with this id is still running"}, id);
  {
    std::lock_guard lock(mutex_);
    by_request_[key] = stream;
    if (stream->form == AnswerForm::event_stream) {
      const json params = message.value("params", json::object());
      const json meta = params.is_object() ? params.value("_meta", json::object()) : json::object();
      if (meta.is_object() && meta.contains("progressToken")) {
        stream->progress_keys.push_back(dump(meta["progressToken"]));
        by_progress_[stream->progress_keys.back()] = stream;
      }
      open_posts_.push_back(stream);
    }
  }
  if (stream->form == AnswerForm::event_stream) {
    Headers headers = {{"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}};
    if (!session.empty()) headers.push_back({"Mcp-Session-Id", session});
    std::lock_guard lock(stream->mutex);
    if (stream->connection.write_all(http::http_stream_head(200, headers), kWriteTimeoutMs) != IoResult::ok) {
      stream->broken = true;
    }
    stream->streaming = true;
  }

  bool present = false;
  if (to_server(message)) {
    present = wait_stream(stream);
  } else {
    deliver(*stream, {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", kTransportError}, {"message", "the session has ended"}}}},
            true);
    present = true;
  }

  bool answered;
  {
    std::lock_guard lock(mutex_);
    if (auto it = by_request_.find(key); it != by_request_.end() && it->second == stream) by_request_.erase(it);
    for (const auto& k : stream->progress_keys) {
      if (auto it = by_progress_.find(k); it != by_progress_.end() && it->second == stream) by_progress_.erase(it);
    }
    std::erase_if(open_posts_, [&](const std::weak_ptr<Stream>& w) {
      auto s = w.lock();
      return !s || s == stream;
    });
    std::lock_guard stream_lock(stream->mutex);
    answered = stream->answered || stream->cancelled;
  }
  if (!answered && !present && !stopping_) {
    // The client went away before its answer: the call is cancelled, so that it stops running.
    (void)to_server({{"jsonrpc", "2.0"},
                     {"method", "notifications/cancelled"},
                     {"params", {{"requestId", id}, {"reason", "the HTTP client closed the connection"}}}});
  }
  if (stream->form == AnswerForm::json && !stream->json_answer.empty()) {
    Headers headers = {{"Content-Type", "application/json"}};
    if (!session.empty()) headers.push_back({"Mcp-Session-Id", session});
    (void)stream->connection.write_all(http::http_response(200, headers, stream->json_answer + "\n"), kWriteTimeoutMs);
  }
}

std::vector<json> HttpTransport::end_previous_client() {
  if (log_) log_("a new client initialized: the previous client's session ends (the sandbox stays)");
  std::vector<json> abandoned;
  for (auto& [key, stream] : by_request_) {
    std::lock_guard lock(stream->mutex);
    stream->cancelled = true;
    signal_fd(stream->wake.get());
    abandoned.push_back(stream->request_id);
  }
  by_request_.clear();
  by_progress_.clear();
  open_posts_.clear();
  if (get_stream_) {
    std::lock_guard lock(get_stream_->mutex);
    get_stream_->broken = true;
    signal_fd(get_stream_->wake.get());
  }
  get_stream_.reset();
  return abandoned;
}

void HttpTransport::end_cancelled_stream(const json& notification) {
  const json params = notification.value("params", json::object());
  if (!params.is_object() || !params.contains("requestId")) return;
  std::shared_ptr<Stream> stream;
  {
    std::lock_guard lock(mutex_);
    auto it = by_request_.find(dump(params["requestId"]));
    if (it == by_request_.end()) return;
    stream = it->second;
    by_request_.erase(it);
  }
  // The server answers a cancelled call with nothing (MCP): its stream ends here rather than stay open.
  std::lock_guard lock(stream->mutex);
  stream->cancelled = true;
  signal_fd(stream->wake.get());
}

void HttpTransport::handle_get(const std::shared_ptr<Stream>& stream) {
  bool taken = false;
  {
    std::lock_guard lock(mutex_);
    if (get_stream_) {
      std::lock_guard stream_lock(get_stream_->mutex);
      taken = !get_stream_->broken;
    }
    if (!taken) get_stream_ = stream;
  }
  if (taken) return refuse(stream, {409, "a GET stream is open already (one per session)"});
  {
    std::lock_guard lock(stream->mutex);
    if (stream->connection.write_all(
            http::http_stream_head(200, {{"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}}),
            kWriteTimeoutMs) != IoResult::ok) {
      stream->broken = true;
    }
    stream->streaming = true;
  }
  (void)wait_stream(stream);
  std::lock_guard lock(mutex_);
  if (get_stream_ == stream) get_stream_.reset();
}

bool HttpTransport::wait_stream(const std::shared_ptr<Stream>& stream) {
  while (true) {
    {
      std::lock_guard lock(stream->mutex);
      if (stream->broken) return false;
      if (stream->answered || stream->cancelled) return true;
    }
    pollfd fds[3] = {{stream->connection.fd(), POLLRDHUP, 0},
                     {stream->wake.get(), POLLIN, 0},
                     {stop_read_.get(), POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (fds[2].revents) return true;  // the transport stops: not the client's doing
    if (fds[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
      std::lock_guard lock(stream->mutex);
      stream->broken = true;
      return stream->answered;
    }
    if (fds[1].revents) {
      uint64_t count;
      (void)!::read(stream->wake.get(), &count, sizeof count);
    }
  }
}

// ---- the server's side ----

bool HttpTransport::to_server(const json& message) {
  const std::string line = dump(message) + "\n";
  std::lock_guard lock(to_server_mutex_);
  if (!to_server_write_) return false;
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(to_server_write_.get(), line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void HttpTransport::end_session() {
  {
    std::lock_guard lock(mutex_);
    session_ended_ = true;
  }
  std::lock_guard lock(to_server_mutex_);
  to_server_write_.reset();  // the server reads the end of its input
}

void HttpTransport::route_loop() {
  std::string buffer;
  char chunk[65536];
  while (true) {
    const ssize_t n = ::read(from_server_read_.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the server's output ended
    buffer.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t newline; (newline = buffer.find('\n', start)) != std::string::npos; start = newline + 1) {
      json message = json::parse(std::string_view(buffer).substr(start, newline - start), nullptr, false);
      if (message.is_object()) route(message);
    }
    buffer.erase(0, start);
  }
}

void HttpTransport::route(const json& message) {
  const bool has_method = message.contains("method") && message["method"].is_string();
  const bool response = !has_method && message.contains("id");
  const bool server_request = has_method && message.contains("id");
  std::shared_ptr<Stream> target;
  {
    std::lock_guard lock(mutex_);
    if (response) {
      if (auto it = by_request_.find(dump(message["id"])); it != by_request_.end()) {
        target = it->second;
        by_request_.erase(it);
      }
    } else {
      if (message["method"] == "notifications/progress") {
        const json params = message.value("params", json::object());
        if (params.is_object() && params.contains("progressToken")) {
          if (auto it = by_progress_.find(dump(params["progressToken"])); it != by_progress_.end()) target = it->second;
        }
      }
      // Anything else (log notifications, elicitation requests) goes on the GET stream, or, when the client has
      // none open, on the newest POST stream still waiting (a call running is why the server speaks).
      if (!target) target = get_stream_;
      for (auto it = open_posts_.rbegin(); !target && it != open_posts_.rend(); ++it) target = it->lock();
    }
  }
  if (target && deliver(*target, message, response)) return;
  if (server_request) {
    // Nobody can answer it: the server's question fails now rather than wait for ever (a network question is
    // then denied). Written from a thread of its own: this thread must keep reading the server's output, or a
    // server blocked writing it would never read the line.
    json reply = {{"jsonrpc", "2.0"},
                  {"id", message["id"]},
                  {"error", {{"code", kTransportError}, {"message", "no stream is open to the client"}}}};
    std::lock_guard lock(mutex_);
    ++active_connections_;
    std::thread([this, reply = std::move(reply)] {
      (void)to_server(reply);
      std::lock_guard done(mutex_);
      --active_connections_;
      connections_done_.notify_all();
    }).detach();
  }
}

}  // namespace oishell::mcp
