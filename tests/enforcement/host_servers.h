#pragma once
// Servers on the host's loopback (the test's own network namespace) for enforcement cases: what a sandboxed program
// must not reach, or reaches only through the broker. Ports are chosen by the kernel; nothing leaves 127.0.0.1/::1.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "base/unique_fd.h"

namespace oishell::test {

// A listening TCP socket on 127.0.0.1 (or ::1), never accepting. With `backlog` 0 its accept queue holds one
// connection: once one waits there, the kernel drops further SYNs and their connects stay pending.
class HostTcpListener {
 public:
  explicit HostTcpListener(bool v6 = false, int backlog = 128);
  bool ok() const { return ok_; }
  uint16_t port() const { return port_; }
  int fd() const { return fd_.get(); }

 private:
  UniqueFd fd_;
  bool ok_ = false;
  uint16_t port_ = 0;
};

// A TCP server on 127.0.0.1 (or ::1), on its own thread: each client gets `banner`, then what it sends first
// (within 2 s) is kept.
class HostTcpServer {
 public:
  explicit HostTcpServer(const char* banner, bool v6 = false);
  ~HostTcpServer();
  HostTcpServer(const HostTcpServer&) = delete;
  HostTcpServer& operator=(const HostTcpServer&) = delete;
  bool ok() const { return listener_.ok(); }
  std::string port() const { return std::to_string(listener_.port()); }
  int accepted() const { return accepted_; }
  // Waits (up to 5 s) until the server thread has taken `n` connections: a client's connect returns before the
  // server's accept does. Returns accepted().
  int wait_accepted(int n) const;
  std::string received();
  // What was received once `needle` is in it, or after 3 s (the server thread records after the client is done).
  std::string received_with(const std::string& needle);

 private:
  void serve();
  HostTcpListener listener_;
  std::string banner_;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::mutex mu_;
  std::string received_;
  std::thread thread_;
};

// A TCP connection from the host (this process's network namespace) to 127.0.0.1:`port` (or [::1]), blocking;
// empty on failure.
UniqueFd connect_host_tcp(uint16_t port, bool v6 = false);

}  // namespace oishell::test
