#include "tests/relay/test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <gtest/gtest.h>

#include "runtime/relay/http_parser.h"

namespace oishell::relay::testing {
namespace {

bool fill_sockaddr(const std::string& ip, uint16_t port, sockaddr_storage& ss, socklen_t& len) {
  ss = {};
  auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, ip.c_str(), &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, ip.c_str(), &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

void set_timeouts(int fd, int seconds) {
  timeval tv{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

}  // namespace

UniqueFd listen_on(const std::string& ip, uint16_t& port) {
  sockaddr_storage ss;
  socklen_t len;
  if (!fill_sockaddr(ip, port, ss, len)) return {};
  UniqueFd fd(socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd.get(), 1024) != 0) return {};
  len = sizeof ss;
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  port = ntohs(ss.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                       : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return fd;
}

UniqueFd connect_to(const std::string& ip, uint16_t port) {
  sockaddr_storage ss;
  socklen_t len;
  if (!fill_sockaddr(ip, port, ss, len)) return {};
  UniqueFd fd(socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  set_timeouts(fd.get(), 10);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return {};
  return fd;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string read_all(int fd, int* error) {
  std::string out;
  char buf[64 * 1024];
  while (true) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (error) *error = n < 0 ? errno : 0;
      return out;
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

std::string read_head(int fd) {
  std::string out;
  char c;
  while (out.size() < 65536) {
    ssize_t n = recv(fd, &c, 1, 0);
    if (n <= 0) return {};
    out.push_back(c);
    if (out.size() >= 4 && out.compare(out.size() - 4, 4, "\r\n\r\n") == 0) return out;
  }
  return {};
}

std::string read_exact(int fd, size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = recv(fd, out.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

Server::Server(Kind kind, const std::string& ip) : ip_(ip), kind_(kind) {
  listener_ = listen_on(ip, port_);
  EXPECT_TRUE(listener_.valid()) << "cannot listen on " << ip;
  acceptor_ = std::thread([this] {
    while (!stop_) {
      pollfd p{listener_.get(), POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      UniqueFd fd(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!fd) continue;
      ++accepted_;
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < workers_.size();) {  // reap finished workers
        if (workers_[i].done->load()) {
          workers_[i].thread.join();
          workers_[i] = std::move(workers_.back());
          workers_.pop_back();
        } else {
          ++i;
        }
      }
      auto done = std::make_shared<std::atomic<bool>>(false);
      workers_.push_back({std::thread([this, done, f = std::make_shared<UniqueFd>(std::move(fd))]() mutable {
                            serve(std::move(*f));
                            *done = true;
                          }),
                          done});
    }
  });
}

Server::~Server() {
  stop_ = true;
  acceptor_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& w : workers_) w.thread.join();
}

void Server::serve(UniqueFd fd) {
  set_timeouts(fd.get(), 1);
  if (kind_ == Kind::http) {
    serve_http(fd.get());
    return;
  }
  char buf[64 * 1024];
  while (!stop_) {
    ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) break;
    received_ += static_cast<uint64_t>(n);
    if (!send_all(fd.get(), std::string_view(buf, static_cast<size_t>(n)))) return;
  }
  shutdown(fd.get(), SHUT_WR);
  // Linger until the peer closes, so that its last bytes are not answered with a reset.
  while (!stop_) {
    ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
  }
}

void Server::serve_http(int fd) {
  std::string in;
  char buf[64 * 1024];
  auto fill = [&]() {
    while (!stop_) {
      ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return false;
      received_ += static_cast<uint64_t>(n);
      in.append(buf, static_cast<size_t>(n));
      return true;
    }
    return false;
  };
  while (!stop_) {
    HeadParse parsed = parse_request_head(in, 64 * 1024);
    if (parsed.status == HeadStatus::incomplete) {
      if (!fill()) return;
      continue;
    }
    if (parsed.status != HeadStatus::complete) {
      send_all(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    in.erase(0, parsed.consumed);
    const HttpRequestHead& head = parsed.head;
    std::string body;
    auto framing = request_body_framing(head);
    if (framing && framing->kind == BodyKind::length) {
      while (in.size() < framing->length && fill()) {
      }
      body = in.substr(0, framing->length);
      in.erase(0, body.size());
    } else if (framing && framing->kind == BodyKind::chunked) {
      ChunkedScanner scanner;
      while (true) {
        auto used = scanner.feed(in);
        if (!used) return;
        body += in.substr(0, *used);
        in.erase(0, *used);
        if (scanner.done()) break;
        if (!fill()) return;
      }
    }
    bool close = head.header("connection") && *head.header("connection") == "close";
    std::string response_body;
    if (head.target.starts_with("/bytes/")) {
      uint64_t size = std::stoull(head.target.substr(7));
      std::string response = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(size) + "\r\n\r\n";
      if (!send_all(fd, response)) return;
      std::string chunk;
      for (uint64_t off = 0; off < size;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(256 * 1024, size - off));
        chunk.resize(n);
        for (size_t i = 0; i < n; ++i) chunk[i] = static_cast<char>(body_byte(off + i));
        if (!send_all(fd, chunk)) return;
        off += n;
      }
    } else {
      if (head.target == "/host") {
        const std::string* host = head.header("host");
        response_body = head.method + " " + head.target + " " + head.version + "\nHost: " + (host ? *host : "-") +
                        "\nProxy-Connection: " + (head.header("proxy-connection") ? "present" : "absent") + "\n";
      } else {
        response_body = body;
      }
      std::string response = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(response_body.size()) +
                             "\r\n\r\n" + response_body;
      if (!send_all(fd, response)) return;
    }
    if (close) return;
  }
}

void RecordingSink::emit(const nlohmann::json& event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(event);
  cv_.notify_all();
}

std::vector<nlohmann::json> RecordingSink::all() {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

std::optional<nlohmann::json> RecordingSink::wait_for(const std::string& name, const std::string& host) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<nlohmann::json> found;
  cv_.wait_for(lock, std::chrono::seconds(5), [&] {
    for (const auto& e : events_) {
      if (e.value("event", "") == name && e.value("host", "") == host) {
        found = e;
        return true;
      }
    }
    return false;
  });
  return found;
}

RelayUnderTest::RelayUnderTest(const NetworkSpec& spec, RelayOptions options, AskHandler ask,
                               const std::function<void(Relay&)>& prepare) {
  auto created = Relay::create(spec, events, std::move(ask), options);
  EXPECT_TRUE(created.is_ok()) << (created.is_ok() ? "" : created.status().message());
  if (!created) return;
  relay_ = std::move(*created);
  if (prepare) prepare(*relay_);
  std::vector<Listener> listeners;
  listeners.push_back({listen_on("127.0.0.1", http_port), Protocol::http});
  listeners.push_back({listen_on("127.0.0.1", socks_port), Protocol::socks5});
  listeners.push_back({listen_on("::1", http6_port), Protocol::http});
  Status started = relay_->start(std::move(listeners));
  EXPECT_TRUE(started.is_ok()) << started.message();
}

RelayUnderTest::~RelayUnderTest() {
  if (relay_) relay_->stop();
}

HostRule rule(std::string_view text) {
  auto r = HostRule::parse(text);
  EXPECT_TRUE(r.is_ok()) << text;
  return r.is_ok() ? *r : HostRule{};
}

HostRule uninspected(std::string_view text) {
  HostRule r = rule(text);
  r.inspect = false;
  return r;
}

Cidr cidr(std::string_view text) {
  auto c = Cidr::parse(text);
  EXPECT_TRUE(c.is_ok()) << text;
  return c.is_ok() ? *c : Cidr{};
}

UniqueFd http_connect(const std::string& relay_ip, uint16_t relay_port, const std::string& authority,
                      std::string* refusal) {
  UniqueFd fd = connect_to(relay_ip, relay_port);
  if (!fd) return {};
  send_all(fd.get(), "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
  std::string head = read_head(fd.get());
  if (head.starts_with("HTTP/1.1 200 ")) return fd;
  if (refusal) *refusal = head + read_all(fd.get());
  return {};
}

namespace {

UniqueFd socks_request(uint16_t relay_port, const std::string& request, int* reply_code) {
  UniqueFd fd = connect_to("127.0.0.1", relay_port);
  if (!fd) return {};
  send_all(fd.get(), std::string("\x05\x01\x00", 3));
  std::string method = read_exact(fd.get(), 2);
  if (method != std::string("\x05\x00", 2)) {
    if (reply_code) *reply_code = -1;
    return {};
  }
  send_all(fd.get(), request);
  std::string reply = read_exact(fd.get(), 10);
  if (reply.size() != 10) {
    if (reply_code) *reply_code = -2;
    return {};
  }
  if (reply_code) *reply_code = static_cast<uint8_t>(reply[1]);
  return reply[1] == 0 ? std::move(fd) : UniqueFd();
}

std::string port_bytes(uint16_t port) {
  return std::string{static_cast<char>(port >> 8), static_cast<char>(port & 0xff)};
}

}  // namespace

UniqueFd socks_connect(uint16_t relay_port, const std::string& host, uint16_t port, int* reply_code) {
  std::string req("\x05\x01\x00\x03", 4);
  req.push_back(static_cast<char>(host.size()));
  req += host + port_bytes(port);
  return socks_request(relay_port, req, reply_code);
}

UniqueFd socks_connect_ip(uint16_t relay_port, const std::string& ipv4, uint16_t port, int* reply_code) {
  std::string req("\x05\x01\x00\x01", 4);
  in_addr a{};
  inet_pton(AF_INET, ipv4.c_str(), &a);
  req.append(reinterpret_cast<const char*>(&a), 4);
  req += port_bytes(port);
  return socks_request(relay_port, req, reply_code);
}

}  // namespace oishell::relay::testing
