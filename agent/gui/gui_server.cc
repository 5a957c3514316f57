#include "agent/gui/gui_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "agent/core/conversation.h"
#include "agent/gui/page_assets.h"
#include "base/http/bearer_token.h"
#include "base/http/http_message.h"

namespace oishell::agent::gui {
namespace {

using nlohmann::json;
using http::Connection;
using http::HttpRequest;
using http::HttpRequestParser;
using http::IoResult;
using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr int kRequestTimeoutMs = 10000;  // the whole request: a slow client holds a thread no longer
constexpr int kKeepAliveMs = 15000;       // an idle event stream sends a comment this often
constexpr int kHangupCheckMs = 500;       // how often an idle event stream looks whether its page has gone
constexpr size_t kMaxMessageBytes = 256 * 1024;

// What every response carries.
Headers security_headers() {
  return {{"Content-Security-Policy",
           "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
           "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"},
          {"Cross-Origin-Opener-Policy", "same-origin"},
          {"Cross-Origin-Resource-Policy", "same-origin"},
          {"Cache-Control", "no-store"}};
}

std::string respond(int status, const std::string& type, std::string_view body) {
  Headers h = security_headers();
  h.emplace_back("Content-Type", type);
  return http::http_response(status, h, body);
}

std::string json_reply(int status, const json& body) {
  return respond(status, "application/json", body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

std::string error_reply(int status, const std::string& message) { return json_reply(status, {{"detail", message}}); }

std::optional<std::string> read_file(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<size_t>(size) > max_bytes) return std::nullopt;
  std::string text(static_cast<size_t>(size), '\0');
  in.seekg(0);
  in.read(text.data(), size);
  if (in.gcount() != size) return std::nullopt;
  return text;
}

// The packaged libraries the page uses, by the path the page asks for.
struct VendorFile {
  const char* path;
  const char* file;  // under the vendor directory
  const char* type;
};
constexpr VendorFile kVendor[] = {
    {"/vendor/marked.js", "marked/marked.min.js", "text/javascript; charset=utf-8"},
    {"/vendor/highlight.js", "highlight.js/highlight.min.js", "text/javascript; charset=utf-8"},
    {"/vendor/highlight.css", "highlight.js/styles/github.css", "text/css; charset=utf-8"},
};

}  // namespace

Result<std::unique_ptr<GuiServer>> GuiServer::start(GuiServerParts parts, const std::string& host, int port) {
  auto listener = http::listen_loopback(host, port);
  if (!listener) return listener.status();
  UniqueFd stopping(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stopping) return Status::from_errno(errno, "eventfd");
  RequestGuard guard(listener->host, listener->port, http::generate_token());
  std::unique_ptr<GuiServer> s(new GuiServer(std::move(parts), std::move(*listener), std::move(guard),
                                             std::move(stopping)));
  // The server's threads take no signal (they inherit the acceptor's mask): Ctrl-C must interrupt the agent's
  // thread, whose terminal read it ends, not land on a thread that waits for a page.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &old);
  s->acceptor_ = std::thread([raw = s.get()] { raw->accept_loop(); });
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return s;
}

GuiServer::~GuiServer() { stop(); }

void GuiServer::stop() {
  if (stopped_) return;
  stopped_ = true;
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(stopping_.get(), &one, sizeof one);
  parts_.hub->close();
  if (acceptor_.joinable()) acceptor_.join();
  reap(/*all=*/true);
}

void GuiServer::reap(bool all) {
  std::lock_guard lock(workers_mutex_);
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (all || it->done.load()) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

void GuiServer::accept_loop() {
  while (true) {
    pollfd fds[2] = {{listener_.fd.get(), POLLIN, 0}, {stopping_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    UniqueFd client = http::accept_connection(listener_.fd.get());
    if (!client) continue;
    reap(/*all=*/false);
    if (active_.load() >= kMaxConnections) {
      const std::string busy = error_reply(503, "too many connections");
      [[maybe_unused]] ssize_t n = ::send(client.get(), busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      continue;
    }
    ++active_;
    std::lock_guard lock(workers_mutex_);
    Worker& w = workers_.emplace_back();
    w.thread = std::thread([this, &w, fd = client.release()]() mutable {
      try {
        serve(UniqueFd(fd));
      } catch (const std::exception&) {
        // A request is never worth the session: whatever it made fail, the connection alone ends.
      }
      --active_;
      w.done = true;
    });
  }
}

void GuiServer::serve(UniqueFd fd) {
  int one = 1;  // an event is small and must go at once, not wait for the previous one's acknowledgement
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  Connection conn(std::move(fd), stopping_.get());
  HttpRequestParser parser(http::HttpLimits{16 * 1024, 64, kMaxMessageBytes + 4096});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kRequestTimeoutMs);
  while (parser.state() == HttpRequestParser::State::need_more) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    std::string chunk;
    if (conn.read_some(&chunk, static_cast<int>(left.count())) != IoResult::ok) return;
    parser.feed(chunk);
  }
  if (parser.state() == HttpRequestParser::State::error) {
    conn.write_all(error_reply(parser.error().status, parser.error().message));
    return;
  }
  const HttpRequest& req = parser.request();
  // The page and its files hold no secret: the Host check alone. The API: every check, and the token.
  const bool api = req.path.starts_with("/api/");
  if (GuardVerdict v = guard_.check_origin(req, /*navigation=*/!api); v.status != 0) {
    conn.write_all(error_reply(v.status, v.reason));
    return;
  }
  if (api && !guard_.authenticated(req)) {
    conn.write_all(error_reply(403, "no valid token: open the address interpreter --gui printed"));
    return;
  }

  if (req.method == "GET") {
    if (req.path == "/") {
      conn.write_all(respond(200, "text/html; charset=utf-8", page_asset("/index.html")->body));
      return;
    }
    if (auto asset = page_asset(req.path)) {
      conn.write_all(respond(200, std::string(asset->content_type), asset->body));
      return;
    }
    for (const auto& v : kVendor) {
      if (req.path != v.path) continue;
      auto text = read_file(parts_.vendor_dir + "/" + v.file, 4 * 1024 * 1024);
      conn.write_all(text ? respond(200, v.type, *text)
                          : error_reply(404, std::string("not installed: ") + parts_.vendor_dir + "/" + v.file));
      return;
    }
    if (req.path == "/api/events") return stream_events(conn, req);
    if (req.path == "/api/conversations") {
      json list = json::array();
      for (const auto& info : list_conversations(parts_.conversations_dir)) {
        list.push_back({{"name", info.name}, {"title", readable_conversation_name(info.name)},
                        {"modified", static_cast<int64_t>(info.modified)}});
        if (list.size() >= 200) break;
      }
      conn.write_all(json_reply(200, {{"conversations", list}}));
      return;
    }
    conn.write_all(error_reply(404, "not found"));
    return;
  }
  if (req.method != "POST") {
    conn.write_all(error_reply(405, "method not allowed"));
    return;
  }
  if (!RequestGuard::json_body(req)) {
    conn.write_all(error_reply(415, "the body must be JSON (Content-Type: application/json)"));
    return;
  }
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) body = json::object();
  if (req.path == "/api/message") {
    if (!body.contains("text") || !body["text"].is_string() || body["text"].get<std::string>().empty()) {
      conn.write_all(error_reply(422, "`text` must be a non-empty string"));
    } else if (!parts_.inbox->push_message(body["text"].get<std::string>())) {
      conn.write_all(error_reply(409, "too many messages are waiting for the agent"));
    } else {
      conn.write_all(json_reply(202, {{"queued", true}}));
    }
  } else if (req.path == "/api/answer") {
    if (!body.contains("id") || !body["id"].is_number_unsigned() || !body.contains("answer") ||
        !body["answer"].is_string()) {
      conn.write_all(error_reply(422, "`id` (a number) and `answer` (a string) are required"));
    } else if (!parts_.inbox->answer(body["id"].get<uint64_t>(), body["answer"].get<std::string>())) {
      conn.write_all(error_reply(409, "that question is no longer open"));
    } else {
      conn.write_all(json_reply(200, {{"answered", true}}));
    }
  } else if (req.path == "/api/stop") {
    const bool stopping = parts_.inbox->stop();
    if (stopping && parts_.stop_work) parts_.stop_work();
    conn.write_all(json_reply(200, {{"stopped", stopping}}));
  } else if (req.path == "/api/resume") {
    const std::string name = body.contains("name") && body["name"].is_string() ? body["name"].get<std::string>() : "";
    bool valid = !name.empty() && name.size() <= 255;
    for (char c : name) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                                          c == '.');
    if (!valid) {
      conn.write_all(error_reply(422, "`name` must be a saved conversation's name"));
    } else if (!parts_.inbox->push_message("%resume " + name)) {
      conn.write_all(error_reply(409, "too many messages are waiting for the agent"));
    } else {
      conn.write_all(json_reply(202, {{"queued", true}}));
    }
  } else {
    conn.write_all(error_reply(404, "not found"));
  }
}

void GuiServer::stream_events(Connection& conn, const HttpRequest& req) {
  uint64_t after = 0;  // the page's last event: it resumes after it
  if (const std::string* last = req.header("Last-Event-ID")) after = std::strtoull(last->c_str(), nullptr, 10);
  Headers h = security_headers();
  h.emplace_back("Content-Type", "text/event-stream");
  if (conn.write_all(http::http_stream_head(200, h)) != IoResult::ok) return;
  auto last_write = std::chrono::steady_clock::now();
  while (true) {
    // A page that went away (reloaded, closed) is noticed within kHangupCheckMs, so its thread ends and a user
    // who reloads often never fills the server: the connection is polled for its end between waits.
    EventHub::Batch batch = parts_.hub->wait_after(after, kHangupCheckMs);
    if (batch.events.empty() && !batch.missed && !batch.closed) {
      pollfd p{conn.fd(), POLLIN | POLLRDHUP, 0};
      if (::poll(&p, 1, 0) > 0) return;  // closed, reset, or sending what a stream never gets: done
      if (std::chrono::steady_clock::now() - last_write < std::chrono::milliseconds(kKeepAliveMs)) continue;
    }
    std::string out;
    if (batch.missed) out += "event: missed\ndata: " + std::to_string(batch.missed) + "\n\n";
    for (const auto& [seq, text] : batch.events) {
      out += "id: " + std::to_string(seq) + "\ndata: " + text + "\n\n";
      after = seq;
    }
    if (out.empty()) out = ": keep-alive\n\n";
    if (conn.write_all(out, kRequestTimeoutMs) != IoResult::ok) return;
    last_write = std::chrono::steady_clock::now();
    if (batch.closed && batch.events.empty()) return;
  }
}

}  // namespace oishell::agent::gui
