#include "host_servers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace oishell::test {
namespace {

// The loopback address of the family, port 0 (any) or `port`.
socklen_t loopback(bool v6, uint16_t port, sockaddr_storage* addr) {
  *addr = {};
  if (v6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_loopback;
    in6->sin6_port = htons(port);
    return sizeof *in6;
  }
  auto* in = reinterpret_cast<sockaddr_in*>(addr);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  in->sin_port = htons(port);
  return sizeof *in;
}

}  // namespace

HostTcpListener::HostTcpListener(bool v6, int backlog)
    : fd_(::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  sockaddr_storage addr;
  socklen_t len = loopback(v6, 0, &addr);
  ok_ = fd_ && ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0 && ::listen(fd_.get(), backlog) == 0 &&
        ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

HostTcpServer::HostTcpServer(const char* banner, bool v6) : listener_(v6), banner_(banner) {
  if (listener_.ok()) thread_ = std::thread([this] { serve(); });
}

HostTcpServer::~HostTcpServer() {
  stop_ = true;
  if (thread_.joinable()) {
    ::shutdown(listener_.fd(), SHUT_RDWR);
    thread_.join();
  }
}

void HostTcpServer::serve() {
  while (!stop_) {
    UniqueFd c(::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!c) continue;
    ++accepted_;
    [[maybe_unused]] ssize_t n = ::send(c.get(), banner_.data(), banner_.size(), MSG_NOSIGNAL);
    char buf[512];
    timeval tv{2, 0};
    ::setsockopt(c.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t got = ::recv(c.get(), buf, sizeof buf, 0);
    if (got > 0) {
      std::lock_guard lock(mu_);
      received_.append(buf, static_cast<size_t>(got));
    }
  }
}

int HostTcpServer::wait_accepted(int n) const {
  for (int i = 0; i < 500 && accepted_ < n; ++i) ::usleep(10'000);
  return accepted_;
}

std::string HostTcpServer::received() {
  std::lock_guard lock(mu_);
  return received_;
}

std::string HostTcpServer::received_with(const std::string& needle) {
  for (int i = 0; i < 300 && received().find(needle) == std::string::npos; ++i) ::usleep(10'000);
  return received();
}

UniqueFd connect_host_tcp(uint16_t port, bool v6) {
  UniqueFd fd(::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_storage addr;
  socklen_t len = loopback(v6, port, &addr);
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) return UniqueFd();
  return fd;
}

}  // namespace oishell::test
