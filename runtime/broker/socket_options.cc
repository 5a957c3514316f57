#include "runtime/broker/socket_options.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>

namespace oishell::broker {
namespace {

struct IntOption {
  int level;
  int name;
};

template <typename T>
void copy_option(int from, int to, int level, int name) {
  T value{};
  socklen_t len = sizeof value;
  if (getsockopt(from, level, name, &value, &len) == 0 && len == sizeof value) {
    setsockopt(to, level, name, &value, len);
  }
}

}  // namespace

void copy_socket_options(int from, int to, int family) {
  static constexpr IntOption kInts[] = {
      {SOL_SOCKET, SO_KEEPALIVE},  {SOL_SOCKET, SO_PRIORITY},      {SOL_SOCKET, SO_OOBINLINE},
      {SOL_SOCKET, SO_RCVLOWAT},   {IPPROTO_TCP, TCP_NODELAY},     {IPPROTO_TCP, TCP_KEEPIDLE},
      {IPPROTO_TCP, TCP_KEEPINTVL}, {IPPROTO_TCP, TCP_KEEPCNT},    {IPPROTO_TCP, TCP_USER_TIMEOUT},
      {IPPROTO_TCP, TCP_NOTSENT_LOWAT},
  };
  for (const auto& o : kInts) copy_option<int>(from, to, o.level, o.name);
  copy_option<linger>(from, to, SOL_SOCKET, SO_LINGER);
  copy_option<timeval>(from, to, SOL_SOCKET, SO_RCVTIMEO);
  copy_option<timeval>(from, to, SOL_SOCKET, SO_SNDTIMEO);
  if (family == AF_INET) copy_option<int>(from, to, IPPROTO_IP, IP_TOS);
  if (family == AF_INET6) copy_option<int>(from, to, IPPROTO_IPV6, IPV6_TCLASS);
}

}  // namespace oishell::broker
