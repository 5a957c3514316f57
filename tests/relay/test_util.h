#pragma once
// Hermetic fixtures for the relay tests: upstream servers on 127.0.0.x / ::1 (an HTTP/1.1 server with
// keep-alive and deterministic large bodies, a TCP echo server with half-close), a relay with listeners bound here,
// an event recorder, and blocking client helpers. No traffic leaves loopback.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"
#include "runtime/relay/relay.h"

namespace oishell::relay::testing {

// Byte i of every test body.
inline uint8_t body_byte(uint64_t i) {
  uint64_t x = (i / 8) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return static_cast<uint8_t>(x >> ((i % 8) * 8));
}

UniqueFd listen_on(const std::string& ip, uint16_t& port);  // port 0 = any; sets the bound port
UniqueFd connect_to(const std::string& ip, uint16_t port);   // blocking, with 10 s send/receive timeouts
bool send_all(int fd, std::string_view data);
// Reads until EOF (or error / timeout). `error` is set to the errno of a failure (0 on a clean EOF).
std::string read_all(int fd, int* error = nullptr);
// Reads one HTTP response head ("HTTP/1.1 ... \r\n\r\n"); empty when the connection closed first.
std::string read_head(int fd);
std::string read_exact(int fd, size_t n);

// A small threaded server: one thread per connection.
class Server {
 public:
  enum class Kind {
    http,  // GET /bytes/N (deterministic body), /host (echoes the request line and Host), POST /echo (body back)
    echo,  // echoes every byte; on EOF shuts its write side after echoing everything
  };
  Server(Kind kind, const std::string& ip);
  ~Server();
  uint16_t port() const { return port_; }
  const std::string& ip() const { return ip_; }
  int accepted() const { return accepted_.load(); }
  uint64_t bytes_received() const { return received_.load(); }

 private:
  void serve(UniqueFd fd);
  void serve_http(int fd);
  std::string ip_;
  uint16_t port_ = 0;
  Kind kind_;
  UniqueFd listener_;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::atomic<uint64_t> received_{0};
  std::thread acceptor_;
  std::mutex mu_;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Worker> workers_;
};

class RecordingSink final : public EventSink {
 public:
  void emit(const nlohmann::json& event) override;
  std::vector<nlohmann::json> all();
  // The first event named `name` whose host is `host`, waiting up to 5 s for it.
  std::optional<nlohmann::json> wait_for(const std::string& name, const std::string& host);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<nlohmann::json> events_;
};

// A relay serving HTTP and SOCKS5 listeners on 127.0.0.1 and ::1, ports chosen by the kernel.
class RelayUnderTest {
 public:
  // `prepare`: called on the relay before it starts (enable_termination, ...).
  RelayUnderTest(const NetworkSpec& spec, RelayOptions options = {}, AskHandler ask = nullptr,
                 const std::function<void(Relay&)>& prepare = nullptr);
  ~RelayUnderTest();
  uint16_t http_port = 0, socks_port = 0, http6_port = 0;
  RecordingSink events;
  Relay& relay() { return *relay_; }

 private:
  std::unique_ptr<Relay> relay_;
};

HostRule rule(std::string_view text);
// A rule with `inspect: false`: any protocol passes its tunnels (raw bytes to the echo server).
HostRule uninspected(std::string_view text);
Cidr cidr(std::string_view text);

// Client helpers through the relay. Each returns the connected socket after a successful handshake, or an invalid
// fd and the refusal (HTTP head+body or the SOCKS reply code) in `refusal`.
UniqueFd http_connect(const std::string& relay_ip, uint16_t relay_port, const std::string& authority,
                      std::string* refusal);
UniqueFd socks_connect(uint16_t relay_port, const std::string& host, uint16_t port, int* reply_code);
UniqueFd socks_connect_ip(uint16_t relay_port, const std::string& ipv4, uint16_t port, int* reply_code);

}  // namespace oishell::relay::testing
