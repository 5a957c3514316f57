#include "base/http/loopback_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace oishell::http {
namespace {

// Waits for `events` on fd, or for wake_fd. Returns ok, timeout, woken or error.
IoResult wait_for(int fd, short events, int wake_fd, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int left = timeout_ms;
    if (timeout_ms >= 0) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      left = static_cast<int>(std::max<long>(0, ms.count()));
    }
    pollfd fds[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
    int n = ::poll(fds, wake_fd >= 0 ? 2 : 1, left);
    if (n < 0) {
      if (errno == EINTR) continue;  // a signal: the wake fd says whether it was ours
      return IoResult::error;
    }
    if (wake_fd >= 0 && fds[1].revents) return IoResult::woken;
    if (n == 0) return IoResult::timeout;
    return IoResult::ok;
  }
}

}  // namespace

std::string Listener::url() const {
  return host.find(':') != std::string::npos ? "http://[" + host + "]:" + std::to_string(port)
                                             : "http://" + host + ":" + std::to_string(port);
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost") return true;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string h(host);
  in_addr a4{};
  if (::inet_pton(AF_INET, h.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  if (::inet_pton(AF_INET6, h.c_str(), &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  return false;
}

Result<Listener> listen_loopback(const std::string& host_in, int port) {
  std::string host = host_in == "localhost" ? "127.0.0.1" : host_in;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (!is_loopback_host(host)) {
    return Status::error("refusing to listen on `" + host_in +
                         "`: the server listens on loopback only (127.0.0.1 or ::1)");
  }
  if (port < 0 || port > 65535) return Status::error("port " + std::to_string(port) + " is out of range");
  bool v6 = host.find(':') != std::string::npos;
  Listener l;
  l.fd = UniqueFd(::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!l.fd) return Status::from_errno(errno, "socket");
  int one = 1;
  ::setsockopt(l.fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage ss{};
  socklen_t len;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET6, host.c_str(), &a->sin6_addr);
    ::setsockopt(l.fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &a->sin_addr);
    len = sizeof *a;
  }
  std::string where = (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
  if (::bind(l.fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    return Status::from_errno(errno, "bind(" + where + ")");
  }
  if (::listen(l.fd.get(), 16) != 0) return Status::from_errno(errno, "listen(" + where + ")");
  sockaddr_storage bound{};
  socklen_t blen = sizeof bound;
  if (::getsockname(l.fd.get(), reinterpret_cast<sockaddr*>(&bound), &blen) != 0) {
    return Status::from_errno(errno, "getsockname");
  }
  l.port = v6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
              : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  l.host = host;
  return l;
}

UniqueFd accept_connection(int listen_fd) {
  while (true) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) return UniqueFd(fd);
    if (errno == EINTR || errno == ECONNABORTED) continue;
    return UniqueFd();
  }
}

IoResult Connection::read_some(std::string* out, int timeout_ms, size_t max) {
  if (broken_) return IoResult::error;
  while (true) {
    char buf[16384];
    ssize_t n = ::recv(fd_.get(), buf, std::min(sizeof buf, max), 0);
    if (n > 0) {
      out->append(buf, static_cast<size_t>(n));
      return IoResult::ok;
    }
    if (n == 0) return IoResult::closed;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return IoResult::error;
    IoResult w = wait_for(fd_.get(), POLLIN, wake_fd_, timeout_ms);
    if (w != IoResult::ok) return w;
  }
}

IoResult Connection::write_all(std::string_view data, int timeout_ms) {
  if (broken_) return IoResult::error;
  while (!data.empty()) {
    ssize_t n = ::send(fd_.get(), data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // Not woken by Ctrl-C here: what is being written (an error, a close) should still go out.
      IoResult w = wait_for(fd_.get(), POLLOUT, -1, timeout_ms);
      if (w == IoResult::ok) continue;
      broken_ = true;
      return w;
    }
    broken_ = true;
    return IoResult::error;
  }
  return IoResult::ok;
}

void Connection::shutdown_write() { ::shutdown(fd_.get(), SHUT_WR); }

}  // namespace oishell::http
