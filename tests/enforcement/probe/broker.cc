// Sockets the connect broker handed over or that came from outside: attempts to point them elsewhere, a connect
// left pending in the broker, the families it refuses, and a datagram association dissolved.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "probe.h"

namespace {

// "ok" or the errno name of the last call's result `rc`.
std::string outcome(long rc) {
  if (rc >= 0) return "ok";
  const char* name = strerrorname_np(errno);
  return name ? name : "EUNKNOWN";
}

// The first IPv4 stream address of HOST:PORT (a name goes through the sandbox's DNS stub).
bool resolve(const std::string& host, const std::string& port, sockaddr_storage* addr, socklen_t* len) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || !found) return false;
  std::memcpy(addr, found->ai_addr, found->ai_addrlen);
  *len = found->ai_addrlen;
  ::freeaddrinfo(found);
  return true;
}

std::string connect_unspec(int fd) {
  sockaddr unspec{};
  unspec.sa_family = AF_UNSPEC;
  return outcome(::connect(fd, &unspec, sizeof unspec));
}

// Sends `message`, then reads what the peer sent (up to 64 bytes, its last newline dropped), or the errno name.
std::string exchange(int fd, const char* message) {
  if (::send(fd, message, std::strlen(message), MSG_NOSIGNAL) < 0) return "send:" + outcome(-1);
  char buf[64];
  ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  if (n < 0) return "recv:" + outcome(-1);
  std::string got(buf, static_cast<size_t>(n));
  if (!got.empty() && got.back() == '\n') got.pop_back();
  return got;
}

}  // namespace

// Connects to HOST:PORT (through the broker: with `inspect: false` the socket is the supervisor's, installed here),
// then tries to re-point it: connect(AF_UNSPEC) (the kernel's way to dissolve a TCP connection), connect to
// OTHER_IP:OTHER_PORT, listen(); then sends "after-repoint" on it and reads what the server sent.
// Prints "unspec=E other=E listen=E recv=BYTES".
OI_PROBE("repoint_tcp", "HOST PORT OTHER_IP OTHER_PORT  (try to re-point a connected TCP socket)") {
  if (args.size() != 4) return 2;
  sockaddr_storage addr{}, other{};
  socklen_t len = 0, other_len = 0;
  if (!resolve(args[0], args[1], &addr, &len) || !resolve(args[2], args[3], &other, &other_len)) {
    std::puts("resolve failed");
    return 0;
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) return probe::report(-1);
  std::string line = "unspec=" + connect_unspec(fd);
  line += " other=" + outcome(::connect(fd, reinterpret_cast<sockaddr*>(&other), other_len));
  line += " listen=" + outcome(::listen(fd, 1));
  line += " recv=" + exchange(fd, "after-repoint");
  std::puts(line.c_str());
  ::close(fd);
  return 0;
}

// Connects to the unix socket PATH and receives two sockets from it (SCM_RIGHTS): one connected to a server, one
// not connected. Tries to point the unconnected one at 127.0.0.1:PORT and to dissolve the connected one
// (AF_UNSPEC), then exchanges bytes on the connected one. Prints "unconnected=E unspec=E recv=BYTES".
OI_PROBE("passed_sockets", "PATH PORT  (sockets passed in from outside)") {
  if (args.size() != 2) return 2;
  int unix_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::strncpy(sun.sun_path, args[0].c_str(), sizeof sun.sun_path - 1);
  if (::connect(unix_fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) != 0) return probe::report(-1);
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (::recvmsg(unix_fd, &msg, MSG_CMSG_CLOEXEC) != 1) return probe::report(-1);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(2 * sizeof(int))) {
    std::puts("no sockets received");
    return 0;
  }
  int fds[2];
  std::memcpy(fds, CMSG_DATA(c), sizeof fds);
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  target.sin_port = htons(static_cast<uint16_t>(std::stoi(args[1])));
  std::string line = "unconnected=" + outcome(::connect(fds[1], reinterpret_cast<sockaddr*>(&target), sizeof target));
  line += " unspec=" + connect_unspec(fds[0]);
  line += " recv=" + exchange(fds[0], "passed-in");
  std::puts(line.c_str());
  return 0;
}

// Opens OUT (created, truncated), then connects a blocking TCP socket to HOST:PORT; when the connect returns,
// writes "connect=E peer=E" to OUT at once (getpeername's outcome: ENOTCONN when nothing is connected). For a
// connect that stays pending in the broker while the supervisor is killed.
OI_PROBE("pending_connect", "HOST PORT OUT  (a connect whose broker dies; the outcome goes to the file OUT)") {
  if (args.size() != 3) return 2;
  int out = ::open(args[2].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (out < 0 || !resolve(args[0], args[1], &addr, &len)) return probe::report(-1);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::string line = "connect=" + outcome(::connect(fd, reinterpret_cast<sockaddr*>(&addr), len));
  sockaddr_storage peer{};
  socklen_t peer_len = sizeof peer;
  line += " peer=" + outcome(::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len)) + "\n";
  [[maybe_unused]] ssize_t n = ::write(out, line.data(), line.size());
  std::fputs(line.c_str(), stdout);
  return 0;
}

// Connects a socket of SOCKET's family (unix, inet, inet6) to a zeroed sockaddr of family FAMILY (a number: 17
// AF_PACKET, 40 AF_VSOCK, ...) of sizeof(sockaddr_storage) bytes; prints "ok" or the errno name.
OI_PROBE("connect_family", "SOCKET FAMILY  (a socket of unix|inet|inet6 connected to a sockaddr of family FAMILY)") {
  if (args.size() != 2) return 2;
  const int domain = args[0] == "unix" ? AF_UNIX : args[0] == "inet" ? AF_INET : args[0] == "inet6" ? AF_INET6 : -1;
  if (domain < 0) return 2;
  int fd = ::socket(domain, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return probe::report(-1);
  sockaddr_storage addr{};
  addr.ss_family = static_cast<sa_family_t>(std::stoi(args[1]));
  return probe::report(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr));
}

// Connects a NETLINK_ROUTE socket to nl_groups GROUPS and nl_pid PID (numbers), then, when that worked, asks the
// kernel for its links (RTM_GETLINK dump) with send() and reads the first reply: prints "ok" (connected, and the
// kernel answered), or the errno name of the call that failed ("send:ENOBUFS" for the send or receive).
OI_PROBE("connect_netlink", "GROUPS PID  (a NETLINK_ROUTE socket connected to groups GROUPS, port id PID)") {
  if (args.size() != 2) return 2;
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return probe::report(-1);
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = static_cast<uint32_t>(std::stoul(args[0], nullptr, 0));
  addr.nl_pid = static_cast<uint32_t>(std::stoul(args[1], nullptr, 0));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return probe::report(-1);
  struct {
    nlmsghdr header;
    ifinfomsg body;
  } request{};
  request.header.nlmsg_len = sizeof request;
  request.header.nlmsg_type = RTM_GETLINK;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.header.nlmsg_seq = 1;
  request.body.ifi_family = AF_UNSPEC;
  if (::send(fd, &request, sizeof request, 0) != static_cast<ssize_t>(sizeof request)) {
    std::printf("send:");
    return probe::report(-1);
  }
  char reply[8192];
  ssize_t n = ::recv(fd, reply, sizeof reply, 0);
  if (n < static_cast<ssize_t>(sizeof(nlmsghdr))) {
    std::printf("recv:");
    return probe::report(-1);
  }
  return probe::report(0);
}

// A datagram socket bound to 127.0.0.1:40123 (its address then outlives a disconnect), connected to HOST:PORT (a udp
// rule's: through the datagram relay) and exchanging one datagram; then connect(AF_UNSPEC), after which: send()
// without an address, a sendto() straight to the address it was connected to (the relay's inner socket, as
// getpeername gave it) waiting 1 s for a reply, a sendto() to a receiver of its own on 127.0.0.1, and a new connect
// to HOST:PORT with one more exchange. Prints "first=BYTES unspec=E send=E inner=E|BYTES local=E again=BYTES".
OI_PROBE("udp_unspec", "HOST PORT  (a UDP association dissolved by connect(AF_UNSPEC))") {
  if (args.size() != 2) return 2;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(args[0].c_str(), args[1].c_str(), &hints, &found) != 0 || !found) {
    std::puts("resolve failed");
    return 0;
  }
  sockaddr_storage target{};
  std::memcpy(&target, found->ai_addr, found->ai_addrlen);
  const socklen_t target_len = found->ai_addrlen;
  ::freeaddrinfo(found);
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  // A port of its own choosing (the sandbox's namespace is its own): a socket bound to port 0 gets its port back
  // at the disconnect, only one named in bind() keeps it.
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  local.sin_port = htons(40123);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) return probe::report(-1);
  local.sin_port = 0;
  timeval wait{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  auto exchange_once = [fd](const char* message) -> std::string {
    if (::send(fd, message, std::strlen(message), 0) < 0) return "send:" + outcome(-1);
    char buf[64];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    return n < 0 ? "recv:" + outcome(-1) : std::string(buf, static_cast<size_t>(n));
  };
  if (::connect(fd, reinterpret_cast<sockaddr*>(&target), target_len) != 0) return probe::report(-1);
  std::string line = "first=" + exchange_once("one");
  sockaddr_storage inner{};
  socklen_t inner_len = sizeof inner;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&inner), &inner_len) != 0) return probe::report(-1);
  line += " unspec=" + connect_unspec(fd);
  line += " send=" + outcome(::send(fd, "two", 3, 0));
  timeval short_wait{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &short_wait, sizeof short_wait);
  if (::sendto(fd, "three", 5, 0, reinterpret_cast<sockaddr*>(&inner), inner_len) < 0) {
    line += " inner=sendto:" + outcome(-1);
  } else {
    char buf[64];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    line += " inner=" + (n < 0 ? outcome(-1) : std::string(buf, static_cast<size_t>(n)));
  }
  int receiver = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in receiver_addr = local;
  socklen_t receiver_len = sizeof receiver_addr;
  if (receiver < 0 || ::bind(receiver, reinterpret_cast<sockaddr*>(&receiver_addr), sizeof receiver_addr) != 0 ||
      ::getsockname(receiver, reinterpret_cast<sockaddr*>(&receiver_addr), &receiver_len) != 0) {
    return probe::report(-1);
  }
  char got[8];
  const bool delivered =
      ::sendto(fd, "four", 4, 0, reinterpret_cast<sockaddr*>(&receiver_addr), sizeof receiver_addr) == 4 &&
      ::recv(receiver, got, sizeof got, 0) == 4;
  line += " local=" + (delivered ? std::string("ok") : outcome(-1));
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&target), target_len) != 0) {
    line += " again=connect:" + outcome(-1);
  } else {
    line += " again=" + exchange_once("five");
  }
  std::puts(line.c_str());
  return 0;
}

// A caller with a root of its own: a user namespace of its own (nested_namespaces), chroot(DIR), then a connect
// to the unix socket PATH as that root names it. Prints "ok" or the errno name of the call that failed
// ("unshare:EPERM", "chroot:EPERM", or the connect's).
OI_PROBE("chroot_connect", "DIR PATH  (unshare a user namespace, chroot to DIR, connect to PATH)") {
  if (args.size() != 2) return 2;
  if (::unshare(CLONE_NEWUSER) != 0) {
    std::printf("unshare:");
    return probe::report(-1);
  }
  if (::chroot(args[0].c_str()) != 0 || ::chdir("/") != 0) {
    std::printf("chroot:");
    return probe::report(-1);
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  std::strncpy(sun.sun_path, args[1].c_str(), sizeof sun.sun_path - 1);
  return probe::report(::connect(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun));
}
