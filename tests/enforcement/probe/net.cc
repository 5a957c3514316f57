// Network actions: TCP to loopback, unix sockets by path and abstract name.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "probe.h"

namespace {

int connect_unix(const std::string& name, bool abstract) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t offset = abstract ? 1 : 0;  // abstract names start with a NUL byte
  std::memcpy(addr.sun_path + offset, name.data(), std::min(name.size(), sizeof addr.sun_path - 1 - offset));
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + name.size());
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), len);
  int saved = errno;
  ::close(fd);
  errno = saved;
  return rc;
}

int bind_unix(const std::string& name, bool abstract) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t offset = abstract ? 1 : 0;
  std::memcpy(addr.sun_path + offset, name.data(), std::min(name.size(), sizeof addr.sun_path - 1 - offset));
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + name.size());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 4) != 0) return -1;
  return fd;  // left open: the process exits right after
}

}  // namespace

OI_PROBE("connect_tcp", "IP PORT  (127.0.0.1 or ::1)") {
  if (args.size() != 2) return 2;
  sockaddr_storage addr{};
  socklen_t len;
  int family;
  uint16_t port = static_cast<uint16_t>(std::stoi(args[1]));
  if (args[0].find(':') != std::string::npos) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&addr);
    in6->sin6_family = family = AF_INET6;
    in6->sin6_port = htons(port);
    if (::inet_pton(AF_INET6, args[0].c_str(), &in6->sin6_addr) != 1) return 2;
    len = sizeof *in6;
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&addr);
    in->sin_family = family = AF_INET;
    in->sin_port = htons(port);
    if (::inet_pton(AF_INET, args[0].c_str(), &in->sin_addr) != 1) return 2;
    len = sizeof *in;
  }
  int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return probe::report(-1);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), len);
  probe::report(rc);
  ::close(fd);
  return 0;
}

OI_PROBE("serve_tcp", "PORT  (bind 127.0.0.1:PORT, listen, connect to it, accept: a TCP server inside)") {
  if (args.size() != 1) return 2;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(args[0])));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0) return probe::report(-1);
  if (::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(server, 1) != 0) {
    probe::report(-1);
    ::close(server);
    return 0;
  }
  int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int rc = ::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (rc == 0) {
    int accepted = ::accept4(server, nullptr, nullptr, SOCK_CLOEXEC);
    rc = accepted < 0 ? -1 : 0;
    if (accepted >= 0) ::close(accepted);
  }
  probe::report(rc);
  ::close(client);
  ::close(server);
  return 0;
}

OI_PROBE("connect_unix", "PATH") {
  if (args.size() != 1) return 2;
  return probe::report(connect_unix(args[0], false));
}

OI_PROBE("connect_abstract", "NAME  (without the leading NUL)") {
  if (args.size() != 1) return 2;
  return probe::report(connect_unix(args[0], true));
}

OI_PROBE("self_unix", "PATH|@NAME  (bind and listen, then connect to it: the allowed neighbour)") {
  if (args.size() != 1) return 2;
  bool abstract = !args[0].empty() && args[0][0] == '@';
  std::string name = abstract ? args[0].substr(1) : args[0];
  if (bind_unix(name, abstract) < 0) {
    std::printf("bind: ");
    return probe::report(-1);
  }
  return probe::report(connect_unix(name, abstract));
}
