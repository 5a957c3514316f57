#pragma once
// Sockets for the loopback servers (`interpreter --server`/`--gui`, `oishell mcp --http`): a listener that refuses any address but loopback, and a connection whose reads
// and writes are bounded in time and can be woken (Ctrl-C, SIGTERM) so that no client can block the server.
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::http {

struct Listener {
  UniqueFd fd;
  std::string host;  // numeric: "127.0.0.1" or "::1"
  int port = 0;      // the port bound (the kernel's choice when 0 was asked)
  // "http://127.0.0.1:8000", "http://[::1]:8000"
  std::string url() const;
};

// Whether `host` names a loopback address: "localhost", 127.0.0.0/8, "::1" (also in brackets).
bool is_loopback_host(std::string_view host);
// Binds and listens on `host`:`port` (0: any free port). Only loopback hosts; "localhost" means 127.0.0.1.
[[nodiscard]] Result<Listener> listen_loopback(const std::string& host, int port);

enum class IoResult { ok, closed, timeout, woken, error };

class Connection {
 public:
  // `wake_fd` (may be -1): when it becomes readable every wait returns `woken`.
  Connection(UniqueFd fd, int wake_fd) : fd_(std::move(fd)), wake_fd_(wake_fd) {}
  int fd() const { return fd_.get(); }
  // From now on waits also end at `wake_fd` (-1: at nothing): a connection admitted on another thread gets the
  // agent's Ctrl-C once the agent's thread serves it.
  void set_wake_fd(int wake_fd) { wake_fd_ = wake_fd; }
  // Appends what arrives within `timeout_ms` (-1: no limit) to *out; at most `max` bytes.
  IoResult read_some(std::string* out, int timeout_ms, size_t max = 64 * 1024);
  // Writes everything; each wait for the peer to take more is bounded by `timeout_ms`. After a failure every later
  // write fails at once (the peer is gone or stuck).
  IoResult write_all(std::string_view data, int timeout_ms = 30000);
  bool broken() const { return broken_; }
  // Stops sending and receiving; a lingering read then sees the end.
  void shutdown_write();

 private:
  UniqueFd fd_;
  int wake_fd_;
  bool broken_ = false;
};

// Accepts one connection (non-blocking listener fd ready); invalid when none was waiting.
UniqueFd accept_connection(int listen_fd);

}  // namespace oishell::http
