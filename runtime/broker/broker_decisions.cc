// The connect broker's decision table (broker.h's table, in code): a brokered call read once from the caller (its
// socket, and the address and any MSG_FASTOPEN data from its memory), then answered by the row its socket's family
// and destination fall in: refused families and netlink groups, a disconnect, the sandbox's own loopback (Landlock's
// TCP ports kept), and outside TCP as the policy decides it (denied, joined to the relay's inspecting path, or
// connected directly). Unix sockets are broker_unix.cc's rows, outside UDP broker_udp.cc's; connecting, installing
// and answering are broker.cc's mechanics.
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/broker/address_families.h"
#include "runtime/broker/broker.h"
#include "runtime/broker/broker_request.h"
#include "runtime/broker/caller.h"
#include "runtime/relay/audit.h"

namespace oishell::broker {
namespace {

constexpr size_t kMaxFastOpenBytes = 64 * 1024;
constexpr size_t kMaxIovecs = 64;

std::optional<IpAddress> ip_of(const sockaddr_storage& ss, socklen_t len, uint16_t* port) {
  IpAddress ip;
  if (ss.ss_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);
    ip.family = IpAddress::Family::v4;
    std::memcpy(ip.bytes.data(), &sin->sin_addr, 4);
    *port = ntohs(sin->sin_port);
    return ip;
  }
  if (ss.ss_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    ip.family = IpAddress::Family::v6;
    std::memcpy(ip.bytes.data(), &sin6->sin6_addr, 16);
    *port = ntohs(sin6->sin6_port);
    // An IPv4-mapped address is that IPv4 address.
    static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(ip.bytes.data(), kMapped, 12) == 0) {
      IpAddress v4;
      std::memcpy(v4.bytes.data(), ip.bytes.data() + 12, 4);
      return v4;
    }
    return ip;
  }
  return std::nullopt;
}

// Loopback, or the unspecified address (which Linux connects to the local host): the sandbox's own `lo`.
bool is_local(const IpAddress& ip) {
  if (ip.family == IpAddress::Family::v4) return ip.bytes[0] == 127 || (ip.bytes[0] | ip.bytes[1] | ip.bytes[2] | ip.bytes[3]) == 0;
  static constexpr uint8_t kZero[15] = {};
  return std::memcmp(ip.bytes.data(), kZero, 15) == 0 && (ip.bytes[15] == 1 || ip.bytes[15] == 0);
}

int socket_int(int fd, int level, int name) {
  int value = -1;
  socklen_t len = sizeof value;
  return getsockopt(fd, level, name, &value, &len) == 0 ? value : -1;
}

}  // namespace

void Broker::start(Request& r) {
  const int nr = r.n.data.nr;
  r.callers_fd = static_cast<int>(r.n.data.args[0]);
  auto caller = Caller::open(ctx_.notify_fd, r.n.id, r.n.pid, callers_);
  if (!caller) {
    respond(r, 0, ECONNREFUSED);  // gone, or not ours to look at: fail closed
    return;
  }
  r.caller.emplace(std::move(*caller));
  // The caller's socket first: the check of the first read below proves it the caller's too (caller.h).
  auto sock = r.caller->take_fd_unchecked(r.callers_fd);
  if (!sock) {
    respond(r, 0, sock.status().errno_value() == EBADF ? EBADF : ECONNREFUSED);
    return;
  }
  r.sock = std::move(*sock);
  uint64_t addr_ptr = 0;
  uint64_t addr_len = 0;
  if (nr == __NR_connect) {
    addr_ptr = r.n.data.args[1];
    addr_len = r.n.data.args[2] & 0xffffffff;
  } else if (nr == __NR_sendto) {
    r.fast_open = true;
    addr_ptr = r.n.data.args[4];
    addr_len = r.n.data.args[5] & 0xffffffff;
    size_t size = std::min<uint64_t>(r.n.data.args[2], kMaxFastOpenBytes);
    r.data.resize(size);
    if (Status s = r.caller->read(r.n.data.args[1], r.data.data(), size); !s.is_ok()) {
      respond(r, 0, s.errno_value() ? s.errno_value() : EFAULT);
      return;
    }
  } else if (nr == __NR_sendmsg) {
    r.fast_open = true;
    msghdr msg{};
    if (Status s = r.caller->read(r.n.data.args[1], &msg, sizeof msg); !s.is_ok()) {
      respond(r, 0, EFAULT);
      return;
    }
    addr_ptr = reinterpret_cast<uint64_t>(msg.msg_name);
    addr_len = msg.msg_namelen;
    std::vector<iovec> iov(std::min<size_t>(msg.msg_iovlen, kMaxIovecs));
    if (!iov.empty() && !r.caller->read(reinterpret_cast<uint64_t>(msg.msg_iov), iov.data(),
                                        iov.size() * sizeof(iovec)).is_ok()) {
      respond(r, 0, EFAULT);
      return;
    }
    for (const iovec& v : iov) {
      size_t take = std::min(v.iov_len, kMaxFastOpenBytes - r.data.size());
      size_t at = r.data.size();
      r.data.resize(at + take);
      if (!r.caller->read(reinterpret_cast<uint64_t>(v.iov_base), r.data.data() + at, take).is_ok()) {
        respond(r, 0, EFAULT);
        return;
      }
    }
  } else {
    respond(r, 0, EOPNOTSUPP);  // sendmmsg with MSG_FASTOPEN: not brokered
    return;
  }
  if (addr_ptr == 0 && r.fast_open) {
    respond(r, 0, EDESTADDRREQ);
    return;
  }
  if (addr_len > sizeof(sockaddr_storage)) {
    respond(r, 0, EINVAL);
    return;
  }
  r.addrlen = static_cast<socklen_t>(addr_len);
  if (Status s = r.caller->read(addr_ptr, &r.addr, r.addrlen); !s.is_ok()) {
    respond(r, 0, s.errno_value() == ENOENT ? ECONNREFUSED : EFAULT);
    return;
  }
  r.domain = socket_int(r.sock.get(), SOL_SOCKET, SO_DOMAIN);
  r.type = socket_int(r.sock.get(), SOL_SOCKET, SO_TYPE);
  if (r.domain < 0) {
    respond(r, 0, ENOTSOCK);
    return;
  }
  // A socket of the sandbox's network namespace, or one the broker installed (or one passed in from outside):
  // the latter never connects anywhere again.
  if (!in_sandbox_netns(r.sock.get())) {
    respond(r, 0, EISCONN);
    return;
  }
  if (auto flags = r.caller->fd_flags(r.callers_fd); flags.is_ok()) {
    r.callers_file_flags = flags->file_flags;
    r.callers_cloexec = flags->cloexec;
  } else {
    r.callers_file_flags = ::fcntl(r.sock.get(), F_GETFL);  // FD_CLOEXEC unknown: left off
  }
  r.callers_nonblocking = (r.callers_file_flags & O_NONBLOCK) != 0;
  if (r.addrlen < sizeof(sa_family_t)) {
    respond(r, 0, EINVAL);
    return;
  }
  // Families first (address_families.h): what the broker has no rule for is never connected with its rights.
  if (int refusal = refused_address(r.domain, r.addr, r.addrlen); refusal != 0) {
    if (refusal == EINVAL) {
      respond(r, 0, refusal);
    } else if (refusal == EPERM) {
      deny(r, "netlink", "groups or a port id", 0, "a netlink socket may talk to the kernel only",
           "netlink: kernel only", refusal);
    } else {
      deny(r, "connect", "family " + std::to_string(r.domain) + "/" + std::to_string(r.addr.ss_family), 0,
           "an address family the broker does not connect", "address families", refusal);
    }
    return;
  }
  if (r.addr.ss_family == AF_UNSPEC && !r.fast_open) {
    // A disconnect. A datagram socket's association with the relay ends with it, at once: its record is keyed by
    // the socket's local address (read before the disconnect can release it), which an explicit bind keeps, and a
    // sendto() of the relay's inner address from it would otherwise still be forwarded (broker_udp.cc).
    forget_datagrams(r);
    connect_callers_socket(r, reinterpret_cast<sockaddr*>(&r.addr), r.addrlen);
    return;
  }
  if (r.domain == AF_UNIX) {
    start_unix(r);
  } else if (r.domain == AF_INET || r.domain == AF_INET6) {
    start_inet(r);
  } else if (r.fast_open) {
    respond(r, 0, EOPNOTSUPP);  // never a send of the caller's bytes from the supervisor on a netlink socket
  } else {
    connect_callers_socket(r, reinterpret_cast<sockaddr*>(&r.addr), r.addrlen);  // netlink, to the kernel: per namespace
  }
}

bool Broker::in_sandbox_netns(int sock) {
  // Fast: the namespace's cookie (SO_NETNS_COOKIE, one call, never reused while the machine runs), known once a
  // socket of the sandbox's was seen the slow way (SIOCGSKNS opens the namespace: its inode is compared).
  uint64_t cookie = 0;
  socklen_t len = sizeof cookie;
  const bool has_cookie = ::getsockopt(sock, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) == 0 && len == sizeof cookie;
  if (has_cookie && sandbox_netns_cookie_ != 0) return cookie == sandbox_netns_cookie_;
  UniqueFd netns(::ioctl(sock, SIOCGSKNS));
  struct stat ns {};
  if (!netns || ::fstat(netns.get(), &ns) != 0 || ns.st_ino != ctx_.sandbox_netns) return false;
  if (has_cookie) sandbox_netns_cookie_ = cookie;
  return true;
}

void Broker::start_inet(Request& r) {
  forget_datagrams(r);  // a datagram socket connected anew (or disconnected) leaves its association: broker_udp.cc
  uint16_t port = 0;
  auto ip = ip_of(r.addr, r.addrlen, &port);
  if (!ip) {
    // A family the socket does not speak, or a short address: the kernel's own answer, on the caller's socket.
    connect_callers_socket(r, reinterpret_cast<sockaddr*>(&r.addr), r.addrlen);
    return;
  }
  if (r.domain == AF_INET && r.addr.ss_family != AF_INET) {
    respond(r, 0, EAFNOSUPPORT);
    return;
  }
  if (is_local(*ip)) {
    if (r.type == SOCK_STREAM && ctx_.landlock_tcp &&
        std::find(ctx_.loopback_tcp_ports.begin(), ctx_.loopback_tcp_ports.end(), port) ==
            ctx_.loopback_tcp_ports.end()) {
      deny(r, "loopback", ip->to_string(), port, "Landlock allows no TCP connect to this port inside",
           "landlock: tcp connect ports", EACCES);
      return;
    }
    if (r.fast_open && r.type != SOCK_STREAM) {
      respond(r, 0, EOPNOTSUPP);
      return;
    }
    connect_callers_socket(r, reinterpret_cast<sockaddr*>(&r.addr), r.addrlen);
    return;
  }
  std::optional<std::string> name = ctx_.name_of ? ctx_.name_of(*ip) : std::nullopt;
  std::string host = name ? *name : ip->to_string();
  r.port = port;
  if (r.type != SOCK_STREAM) {
    start_outside_udp(r, host, !name);
    return;
  }
  start_outside_tcp(r, host, !name);
}

void Broker::start_outside_tcp(Request& r, const std::string& host, bool literal) {
  r.host = host;
  if (ctx_.spec->mode == NetMode::none) {
    deny(r, "connect", host, r.port, "the network mode is none", "mode: none", ENETUNREACH);
    return;
  }
  NetDecision decision = decide(*ctx_.spec, host, r.port);
  if (decision.verdict == NetDecision::Verdict::deny) {
    deny(r, "connect", host, r.port, "denied by policy", decision.rule, EACCES);
    return;
  }
  r.rule = decision.rule;
  if (std::string refusal = check_known_destination(*ctx_.spec, host); !refusal.empty()) {
    deny(r, "connect", host, r.port, refusal, "private-address guard", EACCES);  // before any question
    return;
  }
  if (decision.verdict == NetDecision::Verdict::ask || decision.inspect) {
    start_join(r);
    return;
  }
  resolve_then_start(r, host, literal, "connect", EHOSTUNREACH);
}

}  // namespace oishell::broker
