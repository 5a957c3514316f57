#pragma once
// `interpreter --gui`: the web UI's server, on loopback only, in the agent's process (the page is a view of this
// session: nothing it does reaches the sandbox but through the agent, as the terminal's keys do).
//
//   GET  /                  the page (opened as /#token=T: the token stays in the page, agent/gui/request_guard.h)
//   GET  /app.js, /app.css  the page's own script and style (built in)
//   GET  /vendor/...        Debian's packaged marked and highlight.js, read from where the packages put them
//   GET  /api/events        the session as server-sent events, after Last-Event-ID (agent/gui/event_hub.h)
//   GET  /api/conversations the saved conversations, newest first
//   POST /api/message       {"text"}: a message for the chat (or a % command), queued for the prompt
//   POST /api/answer        {"id", "answer"}: the answer to the question on screen
//   POST /api/stop          what Ctrl-C does to what runs
//   POST /api/resume        {"name"}: continue a saved conversation (`%resume NAME` at the next prompt)
// Every /api/ request carries the token (Authorization: Bearer) and passes agent/gui/request_guard.h's checks; the
// page and its files pass the Host check; every response carries a strict Content-Security-Policy (scripts
// and styles from this origin only, no inline script, images from here or data: URLs, no framing, no forms) and
// nosniff. Each connection has a thread of its own (at most kMaxConnections); the session's events stream to each
// open page.
#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "agent/gui/event_hub.h"
#include "agent/gui/page_inbox.h"
#include "agent/gui/request_guard.h"
#include "base/http/http_message.h"
#include "base/http/loopback_socket.h"
#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::agent::gui {

struct GuiServerParts {
  EventHub* hub = nullptr;
  PageInbox* inbox = nullptr;
  std::string conversations_dir;    // listed for the page
  std::function<void()> stop_work;  // Stop: what Ctrl-C does to what runs (thread-safe)
  std::string vendor_dir = "/usr/share/javascript";
};

class GuiServer {
 public:
  static constexpr int kMaxConnections = 32;

  // Listens on `host` (a loopback address; "localhost" is 127.0.0.1) and `port` (0: any free one) and serves.
  [[nodiscard]] static Result<std::unique_ptr<GuiServer>> start(GuiServerParts parts, const std::string& host,
                                                                int port);
  ~GuiServer();
  GuiServer(const GuiServer&) = delete;
  GuiServer& operator=(const GuiServer&) = delete;

  // The page's address with the token (what the user opens).
  std::string url() const { return guard_.url_with_token(); }
  int port() const { return listener_.port; }
  // Stops accepting, ends every stream and waits for the connections' threads.
  void stop();

 private:
  GuiServer(GuiServerParts parts, http::Listener listener, RequestGuard guard, UniqueFd stopping)
      : parts_(std::move(parts)), listener_(std::move(listener)), guard_(std::move(guard)),
        stopping_(std::move(stopping)) {}
  void accept_loop();
  void serve(UniqueFd fd);
  void stream_events(http::Connection& conn, const http::HttpRequest& req);
  struct Worker {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void reap(bool all);

  GuiServerParts parts_;
  http::Listener listener_;
  RequestGuard guard_;
  UniqueFd stopping_;  // an eventfd, readable once stop() begins: wakes every wait
  std::thread acceptor_;
  std::mutex workers_mutex_;
  std::list<Worker> workers_;
  std::atomic<int> active_{0};
  bool stopped_ = false;
};

}  // namespace oishell::agent::gui
