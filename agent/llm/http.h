#pragma once
// A small HTTP client on libcurl for the LLM APIs: a POST whose 2xx body is streamed to a callback as it arrives
// (for SSE), and a GET for probing local servers. Waits with curl_multi_poll() on an extra "cancel" fd (the
// SIGINT self-pipe), so Ctrl-C aborts a stream at once, and calls on_tick about every 100 ms (the spinner).
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oishell::agent {

// What this client sends (not http::HttpRequest, the parsed request the agent's servers receive).
struct ClientRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // POST body (empty: GET)
  long connect_timeout_ms = 10000;
  long idle_timeout_s = 300;         // abort when no byte arrives for this long (a local model may think long)
  long total_timeout_ms = 0;         // 0: none (streams can be long)
  int cancel_fd = -1;                // readable -> check `cancelled`
  std::function<bool()> cancelled;   // polled while waiting; true aborts the transfer
  std::function<void()> on_tick;     // about every 100 ms while waiting
};

struct ClientResponse {
  long status = 0;                         // 0 when no response arrived
  std::string transport_error;             // curl's message when the transfer failed (empty otherwise)
  bool cancelled = false;
  std::string error_body;                  // body of a non-2xx response (capped)
  std::optional<long> retry_after_s;       // Retry-After (seconds form)
  size_t body_bytes = 0;                   // 2xx body bytes handed to on_body
};

// Performs the request. 2xx body bytes go to on_body as they arrive; other bodies are kept in error_body.
ClientResponse http_perform(const ClientRequest& request, const std::function<void(std::string_view)>& on_body);

}  // namespace oishell::agent
