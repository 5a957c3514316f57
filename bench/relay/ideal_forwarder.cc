#include "bench/relay/ideal_forwarder.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <thread>

#include "base/unique_fd.h"

namespace oishell::bench {
namespace {

constexpr size_t kBytes = 1 << 20;

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Moves everything from `src` to `dst`, then passes the end on.
void pump_splice(int src, int dst) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  UniqueFd r(fds[0]), w(fds[1]);
  fcntl(w.get(), F_SETPIPE_SZ, static_cast<int>(kBytes));
  while (true) {
    ssize_t in = splice(src, nullptr, w.get(), nullptr, kBytes, SPLICE_F_MOVE);
    if (in < 0 && errno == EINTR) continue;
    if (in <= 0) break;
    while (in > 0) {
      ssize_t out = splice(r.get(), nullptr, dst, nullptr, static_cast<size_t>(in), SPLICE_F_MOVE);
      if (out < 0 && errno == EINTR) continue;
      if (out <= 0) return;
      in -= out;
    }
  }
  shutdown(dst, SHUT_WR);
}

void pump_copy(int src, int dst) {
  std::unique_ptr<char[]> buf(new char[kBytes]);
  while (true) {
    ssize_t in = read(src, buf.get(), kBytes);
    if (in < 0 && errno == EINTR) continue;
    if (in <= 0) break;
    if (!write_all(dst, buf.get(), static_cast<size_t>(in))) return;
  }
  shutdown(dst, SHUT_WR);
}

void forward(UniqueFd client, std::string ip, uint16_t port, ForwardBy how) {
  UniqueFd upstream(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(upstream.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(client.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &sin.sin_addr);
  if (connect(upstream.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) return;
  auto pump = how == ForwardBy::splice ? pump_splice : pump_copy;
  std::thread up(pump, client.get(), upstream.get());
  pump(upstream.get(), client.get());
  up.join();
}

}  // namespace

void start_ideal_forwarder(int listener, const char* ip, uint16_t port, ForwardBy how) {
  std::string to = ip;
  std::thread([listener, to, port, how] {
    while (true) {
      int c = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      std::thread(forward, UniqueFd(c), to, port, how).detach();
    }
  }).detach();
}

}  // namespace oishell::bench
