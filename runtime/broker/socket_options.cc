#include "runtime/broker/socket_options.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

namespace oishell::broker {
namespace {

struct Option {
  int level;
  int name;
  socklen_t size;
};

// Keep-alive and its timers, Nagle, linger, timeouts, TCP user timeout, priority, traffic class.
constexpr Option kOptions[] = {
    {SOL_SOCKET, SO_KEEPALIVE, sizeof(int)},       {SOL_SOCKET, SO_PRIORITY, sizeof(int)},
    {SOL_SOCKET, SO_OOBINLINE, sizeof(int)},       {SOL_SOCKET, SO_RCVLOWAT, sizeof(int)},
    {IPPROTO_TCP, TCP_NODELAY, sizeof(int)},       {IPPROTO_TCP, TCP_KEEPIDLE, sizeof(int)},
    {IPPROTO_TCP, TCP_KEEPINTVL, sizeof(int)},     {IPPROTO_TCP, TCP_KEEPCNT, sizeof(int)},
    {IPPROTO_TCP, TCP_USER_TIMEOUT, sizeof(int)},  {IPPROTO_TCP, TCP_NOTSENT_LOWAT, sizeof(int)},
    {SOL_SOCKET, SO_LINGER, sizeof(linger)},       {SOL_SOCKET, SO_RCVTIMEO, sizeof(timeval)},
    {SOL_SOCKET, SO_SNDTIMEO, sizeof(timeval)},    {IPPROTO_IP, IP_TOS, sizeof(int)},
    {IPPROTO_IPV6, IPV6_TCLASS, sizeof(int)},
};
constexpr size_t kCount = sizeof kOptions / sizeof kOptions[0];
constexpr size_t kMaxSize = sizeof(timeval);

bool applies(const Option& o, int family) {
  if (o.level == IPPROTO_IP) return family == AF_INET;
  if (o.level == IPPROTO_IPV6) return family == AF_INET6;
  return true;
}

// What a fresh TCP socket of the family has: only what a program changed is copied (half the calls, usually none
// of the setsockopts).
struct Defaults {
  unsigned char value[kCount][kMaxSize] = {};
  bool known[kCount] = {};
};

const Defaults& defaults_for(int family) {
  static std::once_flag once[2];
  static Defaults table[2];
  const int index = family == AF_INET6 ? 1 : 0;
  std::call_once(once[index], [&] {
    int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    for (size_t i = 0; i < kCount; ++i) {
      socklen_t len = kOptions[i].size;
      table[index].known[i] = applies(kOptions[i], family) &&
                              getsockopt(fd, kOptions[i].level, kOptions[i].name, table[index].value[i], &len) == 0 &&
                              len == kOptions[i].size;
    }
    ::close(fd);
  });
  return table[index];
}

}  // namespace

void copy_socket_options(int from, int to, int family) {
  const Defaults& fresh = defaults_for(family);
  for (size_t i = 0; i < kCount; ++i) {
    const Option& o = kOptions[i];
    if (!applies(o, family)) continue;
    unsigned char value[kMaxSize] = {};
    socklen_t len = o.size;
    if (getsockopt(from, o.level, o.name, value, &len) != 0 || len != o.size) continue;
    if (fresh.known[i] && std::memcmp(value, fresh.value[i], o.size) == 0) continue;
    setsockopt(to, o.level, o.name, value, len);
  }
}

}  // namespace oishell::broker
