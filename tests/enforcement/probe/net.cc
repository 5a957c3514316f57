// Network actions: TCP to loopback, unix sockets by path and abstract name.
#include <arpa/inet.h>
#include <pthread.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>
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

// A server inside on PATH (a thread accepting and writing "A" to each client) and a thread that keeps flipping
// one sockaddr between PATH and OTHER (same length, one byte apart: each flip is one atomic store) while the main
// thread connects through it N times: every connection that succeeds must reach the server inside ("A"); OTHER's
// server (outside, "D") never. Prints "ok N/M" (M connects, N refused: both outcomes must occur), or "reached
// OTHER" / the unexpected errno.
OI_PROBE("unix_rewrite_race", "PATH OTHER N  (a connect whose sockaddr changes while it is pending)") {
  if (args.size() != 3 || args[0].size() != args[1].size()) return 2;
  size_t at = 0;
  while (at < args[0].size() && args[0][at] == args[1][at]) ++at;
  if (at == args[0].size() || args[0].compare(at + 1, std::string::npos, args[1], at + 1, std::string::npos) != 0) {
    return 2;  // not exactly one byte apart
  }
  ::unlink(args[0].c_str());  // a socket file an earlier run left: this path is the probe's own
  int server = bind_unix(args[0], false);
  if (server < 0) return probe::report(-1);
  std::thread([server] {
    while (true) {
      int c = ::accept4(server, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      [[maybe_unused]] ssize_t n = ::send(c, "A", 1, MSG_NOSIGNAL);
      ::close(c);
    }
  }).detach();
  static sockaddr_un shared{};
  shared.sun_family = AF_UNIX;
  std::memcpy(shared.sun_path, args[0].c_str(), args[0].size() + 1);
  const char mine = args[0][at];
  const char theirs = args[1][at];
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      reinterpret_cast<std::atomic<char>*>(&shared.sun_path[at])->store((i & 1) ? theirs : mine,
                                                                        std::memory_order_relaxed);
    }
  });
  int n = std::stoi(args[2]);
  int refused = 0;
  std::string result = "ok";
  for (int i = 0; i < n && result == "ok"; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&shared), sizeof shared) == 0) {
      char c = 0;
      if (::read(fd, &c, 1) == 1 && c != 'A') result = "reached OTHER";
    } else if (errno == EACCES) {
      ++refused;
    } else {
      result = strerrorname_np(errno);
    }
    ::close(fd);
  }
  stop = true;
  flipper.join();
  if (result == "ok") result += " " + std::to_string(refused) + "/" + std::to_string(n);
  std::puts(result.c_str());
  return 0;
}

// N threads each connect to 127.0.0.1:PORT at once (through the broker); prints "ok" when all succeeded, else the
// first errno seen and how many failed. Small stacks: under an RLIMIT_AS memory limit (no cgroup), 1,000 default
// 8 MiB stacks would not fit.
namespace {
struct ParallelConnect {
  uint16_t port = 0;
  std::atomic<int> failed{0};
  std::atomic<int> first_errno{0};
};
void* connect_once(void* arg) {
  auto* p = static_cast<ParallelConnect*>(arg);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(p->port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int expected = 0;
    p->first_errno.compare_exchange_strong(expected, errno);
    ++p->failed;
  }
  if (fd >= 0) ::close(fd);
  return nullptr;
}
}  // namespace

OI_PROBE("parallel_connect_tcp", "PORT N") {
  if (args.size() != 2) return 2;
  ParallelConnect p;
  p.port = static_cast<uint16_t>(std::stoi(args[0]));
  const int n = std::stoi(args[1]);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  std::vector<pthread_t> threads;
  for (int i = 0; i < n; ++i) {
    pthread_t t;
    if (pthread_create(&t, &attr, connect_once, &p) != 0) {
      std::printf("pthread_create failed after %d threads\n", i);
      return 0;
    }
    threads.push_back(t);
  }
  for (pthread_t t : threads) pthread_join(t, nullptr);
  if (p.failed == 0) {
    std::puts("ok");
  } else {
    std::printf("%s x%d\n", strerrorname_np(p.first_errno.load()), p.failed.load());
  }
  return 0;
}

// A server inside on PATH (or the abstract @NAME) and a client of its own: the credentials the server sees for the
// client (SO_PEERCRED). Prints "same" when they are this process's uid and gid (the client is the sandbox's own),
// else "uid=U gid=G" (65534: an id the sandbox's user namespace does not map), or the errno name.
OI_PROBE("unix_peer_ids", "PATH|@NAME  (the client's ids as a server inside sees them)") {
  if (args.size() != 1) return 2;
  bool abstract = !args[0].empty() && args[0][0] == '@';
  std::string name = abstract ? args[0].substr(1) : args[0];
  int server = bind_unix(name, abstract);
  if (server < 0) return probe::report(-1);
  int client = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t offset = abstract ? 1 : 0;
  std::memcpy(addr.sun_path + offset, name.data(), std::min(name.size(), sizeof addr.sun_path - 1 - offset));
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + name.size());
  if (client < 0 || ::connect(client, reinterpret_cast<sockaddr*>(&addr), len) != 0) return probe::report(-1);
  int accepted = ::accept4(server, nullptr, nullptr, SOCK_CLOEXEC);
  ucred peer{};
  socklen_t peer_len = sizeof peer;
  if (accepted < 0 || ::getsockopt(accepted, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) != 0) return probe::report(-1);
  if (peer.uid == ::getuid() && peer.gid == ::getgid()) {
    std::puts("same");
  } else {
    std::printf("uid=%u gid=%u\n", peer.uid, peer.gid);
  }
  return 0;
}
