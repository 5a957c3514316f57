#pragma once
// What the server's handlers share (internal to agent/server): the settings, the token, the sandbox, and the
// bookkeeping that tells a Ctrl-C from a stop the server asked for itself.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "agent/core/loop.h"
#include "base/http/http_message.h"
#include "agent/server/oi_server.h"
#include "base/http/loopback_socket.h"
#include "agent/server/websocket.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)

struct ServerContext {
  ServerParts parts;
  std::string token;
  Listener listener;
  unsigned interrupts_at_start = 0;
  // Stops asked for by the server (a client left or said stop), not by a signal. Counted before the interrupt is
  // raised, and read after the interrupt count, so a stop never looks like a signal (it may come from the
  // HangupWatcher's thread).
  std::atomic<unsigned> interrupts_requested{0};

  // Ctrl-C or SIGTERM arrived: stop serving.
  bool signalled() const;
  // Stops what the agent runs now (the model's stream, a block), as a Ctrl-C would, without stopping the server.
  // Thread-safe.
  void stop_agent();
  // After a response: forgets the wake-up of stops the server asked for (a signal's is seen by signalled()).
  void settle();
  // A new conversation: the sandbox shared, the model client fresh, `history` before it.
  std::unique_ptr<Agent> make_agent(Display* display, UserInput* input, std::vector<Message> history);
};

// An admitted websocket (answered 101 and authenticated): its conversation. `frames` holds what followed the
// credential.
void serve_websocket(ServerContext& ctx, Connection& conn, WsFrameParser frames);
void serve_chat_completions(ServerContext& ctx, Connection& conn, const HttpRequest& request);

}  // namespace oishell::agent::server
