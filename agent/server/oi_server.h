#pragma once
// `interpreter --server`: the agent served on loopback, speaking Open Interpreter 0.4.3's server protocols
// (interpreter/core/async_core.py) over this folder's own HTTP/1.1 and websocket layer. See docs/server.md.
//
//   GET  /  (websocket)            OI's LMC protocol: one conversation per connection
//   POST /openai/chat/completions  OpenAI-compatible, streamed (SSE) or not: the request's messages are the history
//   GET  /openai/models            the one model, for SDKs that list them
//   GET  /heartbeat                {"status": "alive"}
//   GET  /settings/NAME            {"NAME": value}
//   POST /settings                 {"custom_instructions"|"system_message"|"max_output"|"max_turns": value, ...}
//   GET  /                         a plain-text page naming these
//
// Every request needs the token (X-API-KEY or Authorization: Bearer; a websocket may instead send {"auth": TOKEN}
// as its first message): 401 otherwise, before anything reaches the agent. Host must be a loopback name (a defence
// against DNS rebinding), and an Origin the server's own (http://127.0.0.1:PORT, http://localhost:PORT) or one in
// INTERPRETER_ALLOWED_ORIGINS: 403 otherwise, `null` included. Connections are admitted concurrently, each under its
// own deadline (admission.h), so a client that stalls before authenticating holds up nobody; the agent then serves
// the admitted ones one at a time, in order.
// Code runs in the session's sandbox exactly as in the terminal; with auto_run off a websocket client is asked (the
// confirmation chunk, then `go`), and a chat-completions request cannot confirm, so its blocks are refused.
// Ctrl-C or SIGTERM stops what runs and then the server.
#include <optional>

#include "agent/config/config.h"
#include "agent/sandbox/executor.h"
#include "agent/llm/client.h"

namespace oishell::agent::server {

struct ServerParts {
  AgentConfig config;
  std::optional<LlmSettings> llm;  // nullopt: no model configured (requests are answered 503)
  Executor* executor = nullptr;    // the sandbox: one, shared by the conversations in turn
  EnvLookup env;                   // INTERPRETER_HOST, INTERPRETER_PORT, INTERPRETER_API_KEY (OI's names),
                                   // INTERPRETER_ALLOWED_ORIGINS (origins besides the server's own, comma-separated)
};

// Serves until Ctrl-C or SIGTERM. Returns the process exit status: 0 stopped, 1 cannot listen, 2 bad settings.
int run_server(ServerParts parts);

}  // namespace oishell::agent::server
