#pragma once
// The Model Context Protocol's streamable HTTP transport for `oishell mcp --http` (docs/mcp.md): one endpoint
// (/mcp) on a loopback listener, in front of the same McpServer that serves stdio. The server reads and writes
// JSON-RPC lines on a pair of pipes; this transport turns HTTP requests into those lines and routes the server's
// lines back to the HTTP response they belong to:
//
//   POST a request       answered on that POST, as an event stream (progress notifications, then the response) or
//                        as one JSON body, as the client's Accept prefers
//   POST a notification or a response (to an elicitation)   202 Accepted
//   GET                  the server-to-client stream: log notifications, elicitation requests (one at a time)
//   DELETE               ends the session: what runs is stopped, the sandbox torn down, the server ends
//
// `initialize` opens the session (a random Mcp-Session-Id); every later request must carry it (400 without, 404
// with another). There is one session at a time, as there is one sandbox: a new `initialize` (the client
// restarted) ends the previous client's session (its streams close, its running calls are cancelled) and the
// sandbox serves the new one. A client whose POST stream closes before its answer has cancelled it: the
// server gets notifications/cancelled, which interrupts the call, so nothing keeps running for nobody.
// Who may connect at all: runtime/mcp/http_admission.h.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/http/loopback_socket.h"
#include "base/status.h"
#include "base/unique_fd.h"
#include "runtime/mcp/http_admission.h"

namespace oishell::mcp {

class HttpTransport {
 public:
  struct Stream;  // one client connection (http_transport.cc)

  // `max_body_bytes`: the largest POST body (413 beyond). `log`: one line per refused request (may be empty).
  HttpTransport(http::Listener listener, std::string token, size_t max_body_bytes,
                std::function<void(const std::string&)> log);
  // Stops accepting, ends every stream, joins every thread. Precondition: the McpServer reading server_input()
  // and writing server_output() is gone (its serve() has returned).
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Creates the pipes and starts the threads (accepting, routing the server's lines).
  [[nodiscard]] Status start();
  // The McpServer's input (the clients' messages, one per line) and output (its own).
  int server_input() const { return to_server_read_.get(); }
  int server_output() const { return from_server_write_.get(); }
  // A byte written here (from a signal handler: write(2) is async-signal-safe) ends the session as DELETE does.
  int stop_signal_fd() const { return stop_write_.get(); }
  std::string endpoint_url() const { return admission_.endpoint_url(); }

 private:
  void accept_loop();
  void route_loop();
  void serve_connection(std::shared_ptr<Stream> stream);
  void handle_post(const std::shared_ptr<Stream>& stream, const http::HttpRequest& request);
  void handle_get(const std::shared_ptr<Stream>& stream);
  // Waits until the stream's answers are all sent, the client closes it, or the transport stops. False: the
  // client went away first.
  bool wait_stream(const std::shared_ptr<Stream>& stream);
  // The session's checks for a request that is not `initialize`; 0 when it belongs to the open session.
  HttpVerdict check_session(const http::HttpRequest& request);
  // With mutex_ held, at a new initialize: the previous client's streams end; returns the ids of its requests
  // still running, to be cancelled.
  std::vector<nlohmann::json> end_previous_client();
  // notifications/cancelled from the client: the cancelled request's stream ends (no answer will come).
  void end_cancelled_stream(const nlohmann::json& notification);
  void route(const nlohmann::json& message);
  // One line to the McpServer; false once its input is closed.
  bool to_server(const nlohmann::json& message);
  // Closes the McpServer's input: its serve() returns, what runs is stopped. Idempotent.
  void end_session();
  void refuse(const std::shared_ptr<Stream>& stream, const HttpVerdict& verdict, const nlohmann::json& id = nullptr);

  http::Listener listener_;
  HttpAdmission admission_;
  size_t max_body_bytes_;
  std::function<void(const std::string&)> log_;

  UniqueFd to_server_read_, to_server_write_;      // clients' messages -> McpServer
  UniqueFd from_server_read_, from_server_write_;  // McpServer -> clients
  UniqueFd stop_read_, stop_write_;                // readable: the transport is stopping
  std::mutex to_server_mutex_;                     // whole lines

  std::mutex mutex_;  // everything below; taken before a Stream's own
  std::string session_id_;  // empty: none yet
  bool session_ended_ = false;
  std::map<std::string, std::shared_ptr<Stream>> by_request_;  // a request's id (JSON text) -> its POST
  std::map<std::string, std::shared_ptr<Stream>> by_progress_; // a progress token (JSON text) -> its POST
  std::shared_ptr<Stream> get_stream_;                         // the open GET stream, if any
  std::vector<std::weak_ptr<Stream>> open_posts_;              // event-stream POSTs still waiting, oldest first
  size_t active_connections_ = 0;  // detached connection threads still running
  std::condition_variable connections_done_;

  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::thread router_;
};

}  // namespace oishell::mcp
