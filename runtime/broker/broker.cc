// The connect broker's mechanics (broker.h): what its decision table (broker_decisions.cc) sends a call to. The
// caller's own socket connected for it (on the loop when it blocks, retried while a unix listener's backlog is full);
// a socket of the supervisor's connected to each checked address in turn and installed in place of the caller's once
// established (a standby socket made ahead, off the caller's wait); the join to the relay's inspecting path; names
// resolved on the loop; the deadlines; and every answer, a denial's event rate-limited.
#include "runtime/broker/broker.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/broker/broker_request.h"
#include "runtime/broker/caller.h"
#include "runtime/broker/socket_options.h"
#include "runtime/relay/audit.h"
#include "runtime/sys/syscalls.h"

namespace oishell::broker {
namespace {

constexpr uint32_t kRetryUnixMs = 10;
constexpr uint32_t kLoopbackConnectMs = 30'000;

// "127.0.0.1:40000", as the relay's accept sees the peer: an IPv4-mapped address of an IPv6 socket arrives at the
// IPv4 listener as that IPv4 address.
std::string endpoint_text(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (ss.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &sin->sin_addr, host, sizeof host);
    port = ntohs(sin->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
      inet_ntop(AF_INET, &sin6->sin6_addr.s6_addr[12], host, sizeof host);
    } else {
      inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof host);
    }
    port = ntohs(sin6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

// `ss` with an unspecified address (0.0.0.0, ::) replaced by 127.0.0.1 (IPv4-mapped in an AF_INET6 address), its
// port kept.
sockaddr_storage with_loopback_for_wildcard(sockaddr_storage ss) {
  if (ss.ss_family == AF_INET) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    if (sin->sin_addr.s_addr == htonl(INADDR_ANY)) sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  } else if (ss.ss_family == AF_INET6) {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr)) {
      sin6->sin6_addr.s6_addr[10] = sin6->sin6_addr.s6_addr[11] = 0xff;
      const in_addr_t loopback = htonl(INADDR_LOOPBACK);
      std::memcpy(&sin6->sin6_addr.s6_addr[12], &loopback, 4);
    }
  }
  return ss;
}

}  // namespace

socklen_t detail::to_sockaddr(const IpAddress& ip, uint16_t port, int family, sockaddr_storage* ss) {
  std::memset(ss, 0, sizeof *ss);
  if (family == AF_INET) {
    auto* sin = reinterpret_cast<sockaddr_in*>(ss);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    std::memcpy(&sin->sin_addr, ip.bytes.data(), 4);
    return sizeof(sockaddr_in);
  }
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(ss);
  sin6->sin6_family = AF_INET6;
  sin6->sin6_port = htons(port);
  if (ip.family == IpAddress::Family::v4) {
    sin6->sin6_addr.s6_addr[10] = sin6->sin6_addr.s6_addr[11] = 0xff;
    std::memcpy(&sin6->sin6_addr.s6_addr[12], ip.bytes.data(), 4);
  } else {
    std::memcpy(&sin6->sin6_addr, ip.bytes.data(), 16);
  }
  return sizeof(sockaddr_in6);
}

Broker::Broker(BrokerContext ctx) : ctx_(std::move(ctx)), installed_(ctx_.init_pid) {
  if (ctx_.root_fd >= 0) own_tmpfs_devs_ = detail::own_tmpfs_devices(ctx_.root_fd, ctx_.own_tmpfs);
  ctx_.root_fd = -1;  // the supervisor's, closed after this
}

Broker::~Broker() {
  auto pending = std::move(pending_);
  for (auto& [key, r] : pending) {
    if (r->registered >= 0) ctx_.loop->remove(r->registered);
    respond(*r, 0, ECONNREFUSED);
  }
  report_suppressed(std::nullopt);  // the last window's count, however short it ran
}

void Broker::submit(const seccomp_notif& notification) {
  auto r = std::make_unique<Request>();
  r->key = next_key_++;
  r->n = notification;
  Request& req = *r;
  if (pending_.size() >= kMaxPending) {
    respond(req, 0, EAGAIN);
    relay::emit_error(*ctx_.events, "", 0, "broker: more than " + std::to_string(kMaxPending) + " connects pending");
    return;
  }
  pending_.emplace(req.key, std::move(r));
  start(req);
}

void Broker::respond(Request& r, int64_t value, int err) {
  seccomp_notif_resp resp{};
  resp.id = r.n.id;
  resp.val = err ? 0 : value;
  resp.error = err ? -err : 0;
  ::ioctl(ctx_.notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);  // ENOENT: the caller is gone, nothing to answer
  if (r.registered >= 0) {
    ctx_.loop->remove(r.registered);
    r.registered = -1;
  }
  if (!r.join_client.empty() && err && err != EINPROGRESS && ctx_.cancel_join) ctx_.cancel_join(r.join_client);
  pending_.erase(r.key);  // destroys r
}

void Broker::deny(Request& r, std::string_view protocol, std::string_view host, uint16_t port,
                  std::string_view reason, std::string_view rule, int err) {
  const Clock::time_point now = Clock::now();
  report_suppressed(now);  // an ended window's count before what happens in the next
  if (denials_.admit(now)) {
    relay::emit_denied(*ctx_.events, protocol, host, port, reason, rule);
  } else if (summary_at_ != denials_.window_end()) {
    summary_at_ = denials_.window_end();  // the count is reported when this window ends, denied or not by then
    timers_.push(*summary_at_, kSummaryKey);
  }
  respond(r, 0, err);
}

void Broker::report_suppressed(std::optional<Clock::time_point> now) {
  const uint64_t count = denials_.take_suppressed(now);
  if (count == 0) return;
  ctx_.events->emit({{"event", "net.denied"},
                     {"protocol", "broker"},
                     {"host", ""},
                     {"port", 0},
                     {"reason", std::to_string(count) + " more denials of the connect broker in the same second, not "
                                "reported one by one (at most " + std::to_string(kDenialsPerSecond) + " a second)"},
                     {"rule", "rate limit"},
                     {"suppressed", count}});
}

void Broker::resolve_then_start(Request& r, const std::string& host, bool literal, std::string_view protocol,
                                int pin_errno) {
  auto start = [this](Request& req, std::vector<IpAddress> addresses) {
    if (req.type == SOCK_STREAM) {
      start_direct(req, std::move(addresses));
    } else {
      start_datagrams(req, std::move(addresses));
    }
  };
  if (literal) {
    start(r, {*IpAddress::parse(host)});
    return;
  }
  if (auto pin = ctx_.spec->hosts.find(host); pin != ctx_.spec->hosts.end()) {
    auto pinned = IpAddress::parse(pin->second);
    if (!pinned) {
      deny(r, protocol, host, r.port, "pinned address is not an IP", "hosts", pin_errno);
      return;
    }
    start(r, {*pinned});
    return;
  }
  r.wait = Request::Wait::resolving;
  r.deadline = Clock::now() + std::chrono::milliseconds(ctx_.connect_timeout_ms);
  timers_.push(r.deadline, r.key);
  uint64_t key = r.key;
  ctx_.resolve(host, [this, key, start](Result<std::vector<IpAddress>> addresses) {
    auto it = pending_.find(key);
    if (it == pending_.end() || it->second->wait != Request::Wait::resolving) return;
    Request& req = *it->second;
    req.wait = Request::Wait::none;
    if (!addresses) {
      relay::emit_error(*ctx_.events, req.host, req.port, addresses.status().message());
      respond(req, 0, EHOSTUNREACH);
      return;
    }
    start(req, std::move(*addresses));
  });
}

void Broker::start_join(Request& r) {
  if (ctx_.join_port == 0 || !ctx_.expect_join) {
    deny(r, "connect", r.host, r.port, "no relay to inspect the connection", r.rule, EACCES);
    return;
  }
  // The caller's own socket, bound to a loopback port of its own, then connected to the relay's listener: the
  // relay knows it by that port and treats it as `CONNECT host:port`.
  sockaddr_storage local{};
  socklen_t local_len = sizeof local;
  if (::getsockname(r.sock.get(), reinterpret_cast<sockaddr*>(&local), &local_len) != 0) {
    respond(r, 0, errno);
    return;
  }
  uint16_t local_port = 0;
  if (r.domain == AF_INET) {
    local_port = ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  } else {
    local_port = ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
  }
  IpAddress loopback = *IpAddress::parse("127.0.0.1");
  sockaddr_storage relay_addr{};
  socklen_t relay_len = detail::to_sockaddr(loopback, ctx_.join_port, r.domain, &relay_addr);
  if (local_port == 0) {
    sockaddr_storage bind_addr{};
    socklen_t bind_len = detail::to_sockaddr(loopback, 0, r.domain, &bind_addr);
    if (::bind(r.sock.get(), reinterpret_cast<sockaddr*>(&bind_addr), bind_len) != 0) {
      respond(r, 0, errno);
      return;
    }
    local_len = sizeof local;
    if (::getsockname(r.sock.get(), reinterpret_cast<sockaddr*>(&local), &local_len) != 0) {
      respond(r, 0, errno);
      return;
    }
  }
  // A socket bound to the wildcard address (0.0.0.0, ::) leaves the source to the kernel, which takes 127.0.0.1
  // for the relay's 127.0.0.1 (::ffff:127.0.0.1 from an IPv6 socket, which the relay's accept sees as 127.0.0.1):
  // the key is the address the relay will see, or the connection would never be joined and its record stay.
  r.join_client = endpoint_text(with_loopback_for_wildcard(local));
  ctx_.expect_join(r.join_client, r.host, r.port);
  r.addr = relay_addr;
  r.addrlen = relay_len;
  connect_callers_socket(r, reinterpret_cast<sockaddr*>(&r.addr), r.addrlen);
}

void Broker::start_direct(Request& r, std::vector<IpAddress> addresses) {
  r.candidates.clear();
  std::string refusal;
  for (const IpAddress& a : addresses) {
    std::string why = check_resolved_address(*ctx_.spec, a);
    if (!why.empty()) {
      if (refusal.empty()) refusal = why;
      continue;
    }
    if (r.domain == AF_INET && a.family != IpAddress::Family::v4) continue;
    r.candidates.push_back(a);
  }
  if (r.candidates.empty()) {
    if (!refusal.empty()) {
      deny(r, "connect", r.host, r.port, refusal, "private-address guard", EACCES);
    } else {
      relay::emit_error(*ctx_.events, r.host, r.port, "no address of the socket's family");
      respond(r, 0, ENETUNREACH);
    }
    return;
  }
  r.next = 0;
  try_next_candidate(r);
}

void Broker::try_next_candidate(Request& r) {
  while (r.next < r.candidates.size()) {
    const IpAddress& a = r.candidates[r.next++];
    sockaddr_storage ss{};
    socklen_t len = detail::to_sockaddr(a, r.port, r.domain, &ss);
    ino_t inode = 0;
    UniqueFd fd = take_tcp_socket(r.domain, &inode);
    if (!fd) {
      r.last_error = Status::from_errno(errno, "socket").message();
      continue;
    }
    copy_socket_options(r.sock.get(), fd.get(), r.domain);
    r.address = a.to_string();
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS) {
      r.last_error = Status::from_errno(errno, "connect(" + r.address + ")").message();
      continue;
    }
    r.own = std::move(fd);
    r.own_inode = inode;
    r.wait = Request::Wait::own_socket;
    // A near destination (loopback, the LAN) has often answered by now: no trip through the loop. The state is one
    // call (TCP_INFO's first byte); the error of a failed connect is read on the way through on_writable().
    tcp_info info{};
    socklen_t info_len = sizeof info.tcpi_state;
    const bool known = ::getsockopt(r.own.get(), IPPROTO_TCP, TCP_INFO, &info, &info_len) == 0 && info_len >= 1;
    if (known && info.tcpi_state == TCP_ESTABLISHED) {
      finish_own_connect(r, 0);
      return;
    }
    if (known && info.tcpi_state == TCP_CLOSE) {  // refused or unreachable already
      int err = 0;
      socklen_t len = sizeof err;
      if (getsockopt(r.own.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      finish_own_connect(r, err != 0 ? err : ECONNREFUSED);  // never installs a socket that is not established
      return;
    }
    wait_writable(r, r.own.get());  // SYN sent: the loop says when it is done
    return;
  }
  relay::emit_error(*ctx_.events, r.host, r.port, r.last_error);
  bool refused = r.last_error.find("ECONNREFUSED") != std::string::npos;
  bool timed_out = r.last_error.find("timed out") != std::string::npos;
  respond(r, 0, refused ? ECONNREFUSED : timed_out ? ETIMEDOUT : EHOSTUNREACH);
}

void Broker::wait_writable(Request& r, int fd) {
  if (r.registered >= 0) ctx_.loop->remove(r.registered);
  r.registered = -1;
  if (!ctx_.loop->add(fd, EPOLLOUT | EPOLLET, kTagBit | r.key).is_ok()) {
    respond(r, 0, ENOMEM);
    return;
  }
  r.registered = fd;
  r.deadline = Clock::now() + std::chrono::milliseconds(r.wait == Request::Wait::own_socket ? ctx_.connect_timeout_ms
                                                                                           : kLoopbackConnectMs);
  timers_.push(r.deadline, r.key);
}

void Broker::on_event(uint64_t tag, uint32_t) {
  auto it = pending_.find(tag & ~kTagBit);
  if (it == pending_.end()) return;
  on_writable(*it->second);
}

void Broker::on_writable(Request& r) {
  int fd = r.wait == Request::Wait::own_socket ? r.own.get() : r.sock.get();
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (r.wait == Request::Wait::callers_socket) {
    finish_callers_connect(r, err);
    return;
  }
  if (r.wait != Request::Wait::own_socket) return;
  finish_own_connect(r, err);
}

void Broker::finish_own_connect(Request& r, int err) {
  if (r.registered >= 0) ctx_.loop->remove(r.registered);
  r.registered = -1;
  r.wait = Request::Wait::none;
  if (err != 0) {
    r.last_error = Status::from_errno(err, "connect(" + r.address + ")").message();
    r.own.reset();
    try_next_candidate(r);
    return;
  }
  install(r);
}

namespace {

ino_t inode_of(int fd) {
  struct stat st {};
  return fd >= 0 && ::fstat(fd, &st) == 0 ? st.st_ino : 0;
}

}  // namespace

UniqueFd Broker::take_tcp_socket(int family, ino_t* inode) {
  UniqueFd& standby = family == AF_INET6 ? standby_v6_ : standby_v4_;
  if (standby) {
    *inode = family == AF_INET6 ? standby_v6_inode_ : standby_v4_inode_;
    return std::move(standby);
  }
  UniqueFd fresh(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  *inode = inode_of(fresh.get());
  return fresh;
}

void Broker::refill_standby(int family) {
  UniqueFd& standby = family == AF_INET6 ? standby_v6_ : standby_v4_;
  if (standby) return;
  standby = UniqueFd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  // Its inode, for InstalledSockets, read now: off the wait of the next caller it is installed for.
  (family == AF_INET6 ? standby_v6_inode_ : standby_v4_inode_) = inode_of(standby.get());
}

void Broker::install(Request& r) {
  int64_t value = 0;
  if (r.fast_open) {
    ssize_t n = ::send(r.own.get(), r.data.data(), r.data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    value = n < 0 ? 0 : n;
  }
  if (!r.callers_nonblocking) ::fcntl(r.own.get(), F_SETFL, 0);  // made O_NONBLOCK
  seccomp_notif_addfd add{};
  add.id = r.n.id;
  add.flags = SECCOMP_ADDFD_FLAG_SETFD;
  add.srcfd = static_cast<uint32_t>(r.own.get());
  add.newfd = static_cast<uint32_t>(r.callers_fd);
  add.newfd_flags = r.callers_cloexec ? O_CLOEXEC : 0;
  if (::ioctl(ctx_.notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0) {
    int err = errno;
    if (err != ENOENT) relay::emit_error(*ctx_.events, r.host, r.port, Status::from_errno(err, "SECCOMP_IOCTL_NOTIF_ADDFD").message());
    respond(r, 0, err == ENOENT ? ECONNREFUSED : EACCES);
    return;
  }
  relay::emit_allowed(*ctx_.events, "connect", r.host, r.port, r.rule, r.address);
  installed_.add(r.own_inode, r.host, r.port, r.address, static_cast<pid_t>(r.n.pid));
  const int family = r.domain;
  respond(r, value, 0);  // destroys r
  refill_standby(family);
}

void Broker::connect_callers_socket(Request& r, const sockaddr* addr, socklen_t len) {
  const int flags = r.callers_file_flags;
  if (!r.callers_nonblocking) ::fcntl(r.sock.get(), F_SETFL, flags | O_NONBLOCK);
  int err = 0;
  if (r.domain == AF_UNIX) {
    // With the sandbox's ids and no capabilities (as_sandbox.h): write permission on the socket as the sandbox's
    // own connect would need it, and the server's SO_PEERCRED names the sandbox, never the supervisor.
    err = ctx_.as_sandbox ? ctx_.as_sandbox->connect(r.sock.get(), addr, len) : EACCES;
  } else {
    err = ::connect(r.sock.get(), addr, len) == 0 ? 0 : errno;
  }
  if (!r.callers_nonblocking) ::fcntl(r.sock.get(), F_SETFL, flags);
  if (err == 0 || r.callers_nonblocking) {
    finish_callers_connect(r, err);
    return;
  }
  if (err == EINPROGRESS || err == EALREADY) {
    r.wait = Request::Wait::callers_socket;
    wait_writable(r, r.sock.get());
    return;
  }
  if (err == EAGAIN && r.domain == AF_UNIX && Clock::now() < r.retry_until) {
    // A blocking caller waits for room in the listener's backlog, as connect(2) would.
    r.wait = Request::Wait::unix_retry;
    r.deadline = Clock::now() + std::chrono::milliseconds(kRetryUnixMs);
    timers_.push(r.deadline, r.key);
    return;
  }
  finish_callers_connect(r, err);
}

void Broker::finish_callers_connect(Request& r, int err) {
  if (r.registered >= 0) {
    ctx_.loop->remove(r.registered);
    r.registered = -1;
  }
  r.wait = Request::Wait::none;
  int64_t value = 0;
  if (err == 0 && r.fast_open) {
    ssize_t n = ::send(r.sock.get(), r.data.data(), r.data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    value = n < 0 ? 0 : n;
  }
  respond(r, value, err);
}

int Broker::next_timeout_ms() { return timers_.next_timeout_ms(Clock::now()); }

void Broker::on_timer() {
  std::vector<uint64_t> due;
  Clock::time_point now = Clock::now();
  timers_.pop_due(now, due);
  for (uint64_t key : due) {
    if (key == kSummaryKey) {
      report_suppressed(now);
      continue;
    }
    auto it = pending_.find(key);
    if (it == pending_.end()) continue;
    Request& r = *it->second;
    if (r.deadline > now) continue;  // a later deadline replaced this one
    switch (r.wait) {
      case Request::Wait::resolving:
        relay::emit_error(*ctx_.events, r.host, r.port, "name resolution timed out");
        r.wait = Request::Wait::none;
        respond(r, 0, ETIMEDOUT);
        break;
      case Request::Wait::own_socket:
        ctx_.loop->remove(r.registered);
        r.registered = -1;
        r.wait = Request::Wait::none;
        r.own.reset();
        r.last_error = "connect(" + r.address + ") timed out";
        try_next_candidate(r);
        break;
      case Request::Wait::callers_socket:
        finish_callers_connect(r, ETIMEDOUT);
        break;
      case Request::Wait::unix_retry:
        r.wait = Request::Wait::none;
        connect_callers_socket(r, reinterpret_cast<sockaddr*>(&r.addr), r.addrlen);
        break;
      case Request::Wait::none:
        break;
    }
  }
}

}  // namespace oishell::broker
