#pragma once
// The server's door: every connection, until it has proved it holds the token, on a thread of its own, so that a
// client that connects and then sends nothing, or trickles bytes, holds up only itself. Its request must arrive
// within a deadline and under the HTTP parser's size limits; Host must be a loopback name and Origin (when sent) one
// of the server's own origins or one the user allowed; the token must be in the headers (checked once the head is
// in: a refused request's body is never read) or, for a websocket, its first message. Only then is the connection
// handed to the thread that runs the agent (one at a time, as before: the agent, its sandbox and Ctrl-C stay on
// that thread). Every refusal is answered and closed here.
//
// Bounds: at most kMaxAdmitting connections are being admitted at once; a new one past that cuts off the oldest
// still being admitted (a crowd of silent connections cannot keep a real client out for longer than it takes the
// client to send its request; while cut-off ones end, a flood past twice that is closed unanswered). At most
// kMaxWaiting admitted connections wait for the agent; more are answered 503.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/http/http_message.h"
#include "base/http/loopback_socket.h"
#include "agent/server/websocket.h"
#include "base/unique_fd.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)

struct AdmissionPolicy {
  std::string token;
  // Origins a request may come from, as browsers write them ("http://127.0.0.1:8000"): the server's own and any the
  // user allowed (INTERPRETER_ALLOWED_ORIGINS). Compared whole, ignoring ASCII case. `null` (a sandboxed iframe, a
  // file: page, a redirect) is never one.
  std::vector<std::string> origins;
  // From the connection to the whole request (head and body), and from a websocket's handshake to its
  // {"auth": TOKEN} message.
  std::chrono::milliseconds request_timeout{10000};
  std::chrono::milliseconds auth_timeout{10000};
  HttpLimits limits{16 * 1024, 64, 4 * 1024 * 1024};
};

// The server's own origins when it listens on `listener`: http://127.0.0.1:PORT and http://localhost:PORT (or
// http://[::1]:PORT and http://localhost:PORT).
std::vector<std::string> own_origins(const Listener& listener);
// `origins` and the entries of `configured` (separated by commas or spaces; a trailing slash dropped).
std::vector<std::string> with_configured_origins(std::vector<std::string> origins, const std::string& configured);
// The response refusing `request` (Host, Origin, token), or nullopt when it may go on. `first_message_auth` is set
// when it is a websocket upgrade without a credential in its headers, which then authenticates with its first
// message.
std::optional<std::string> refusal(const HttpRequest& request, const AdmissionPolicy& policy,
                                   bool* first_message_auth);

// A connection that passed: its complete request, and, for a websocket (answered 101 and authenticated), the
// frames that followed its credential.
struct Admitted {
  std::unique_ptr<Connection> conn;
  HttpRequestParser parser;
  bool websocket = false;
  WsFrameParser frames;
};

class Admissions {
 public:
  static constexpr size_t kMaxAdmitting = 16;
  static constexpr size_t kMaxWaiting = 16;

  explicit Admissions(AdmissionPolicy policy);
  ~Admissions();  // stops every admission (each ends within a poll slice) and joins the threads
  Admissions(const Admissions&) = delete;
  Admissions& operator=(const Admissions&) = delete;

  // Accepts the connections of `listen_fd` (non-blocking) on a thread of its own, admitting each, until destroyed.
  // Once at most.
  void start_accepting(int listen_fd);
  // Admits `fd` on a thread of its own (cutting off the oldest admission when kMaxAdmitting are running).
  void add(UniqueFd fd);
  // Readable while an admitted connection waits for take().
  int ready_fd() const { return ready_.get(); }
  // The next admitted connection, oldest first.
  std::optional<Admitted> take();

 private:
  struct Slot {
    std::atomic<bool> cut{false}, done{false};
    std::thread thread;
  };
  void admit(UniqueFd fd, Slot* slot);
  void reap();  // joins finished threads; mu_ held

  const AdmissionPolicy policy_;
  UniqueFd ready_;  // eventfd: the count of admitted connections not yet taken
  UniqueFd stop_;   // eventfd: readable once the destructor runs (wakes the acceptor)
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::list<Slot> slots_;  // oldest first
  std::deque<Admitted> admitted_;
};

}  // namespace oishell::agent::server
