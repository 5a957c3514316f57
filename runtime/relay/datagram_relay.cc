#include "runtime/relay/datagram_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "runtime/relay/audit.h"

namespace oishell::relay {
namespace {

constexpr uint64_t kUpstreamBit = uint64_t{1} << 58;

uint64_t elapsed_ms(Clock::time_point since, Clock::time_point now) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now - since).count());
}

}  // namespace

DatagramSource DatagramSource::from(const sockaddr_storage& ss, socklen_t len) {
  DatagramSource s;
  if (ss.ss_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
      auto* sin = reinterpret_cast<sockaddr_in*>(&s.addr);
      sin->sin_family = AF_INET;
      sin->sin_port = sin6->sin6_port;
      std::memcpy(&sin->sin_addr, &sin6->sin6_addr.s6_addr[12], 4);
      s.len = sizeof(sockaddr_in);
      return s;
    }
    auto* out = reinterpret_cast<sockaddr_in6*>(&s.addr);
    out->sin6_family = AF_INET6;
    out->sin6_port = sin6->sin6_port;
    out->sin6_addr = sin6->sin6_addr;
    out->sin6_scope_id = sin6->sin6_scope_id;
    s.len = sizeof(sockaddr_in6);
    return s;
  }
  if (ss.ss_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);
    auto* out = reinterpret_cast<sockaddr_in*>(&s.addr);
    out->sin_family = AF_INET;
    out->sin_port = sin->sin_port;
    out->sin_addr = sin->sin_addr;
    s.len = sizeof(sockaddr_in);
  }
  return s;  // another family: len 0, never associated
}

std::string DatagramSource::key() const {
  if (addr.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&addr);
    return std::string("4") + std::string(reinterpret_cast<const char*>(&sin->sin_addr), 4) +
           std::string(reinterpret_cast<const char*>(&sin->sin_port), 2);
  }
  if (addr.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    return std::string("6") + std::string(reinterpret_cast<const char*>(&sin6->sin6_addr), 16) +
           std::string(reinterpret_cast<const char*>(&sin6->sin6_port), 2);
  }
  return {};
}

std::string DatagramSource::text() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &sin->sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(sin->sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(sin6->sin6_port));
  }
  return "?";
}

DatagramRelay::DatagramRelay(EventLoop& loop, EventSink& events, DatagramOptions options)
    : loop_(loop), events_(events), options_(options), buffer_(options.max_datagram) {}

DatagramRelay::~DatagramRelay() {
  while (!by_source_.empty()) end(by_source_.begin());
  for (const UniqueFd& fd : inner_) loop_.remove(fd.get());
}

Status DatagramRelay::serve(std::vector<UniqueFd> inner) {
  if (!inner_.empty()) return Status::error("datagram relay: serve() twice");
  for (UniqueFd& fd : inner) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
      return Status::from_errno(errno, "datagram relay: getsockname(inner socket)");
    }
    for (int family : inner_family_) {
      if (family == ss.ss_family) return Status::error("datagram relay: two inner sockets of one family");
    }
    int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
      return Status::from_errno(errno, "datagram relay: fcntl(inner socket, O_NONBLOCK)");
    }
    // Level-triggered: a burst is handled per readiness, the rest at the next wait.
    OI_TRY_CTX(loop_.add(fd.get(), EPOLLIN, kTagBit | inner_.size()), "datagram relay: inner socket");
    inner_family_.push_back(ss.ss_family);
    inner_.push_back(std::move(fd));
  }
  return Status::ok();
}

std::optional<DatagramSource> DatagramRelay::inner_address(int domain) const {
  auto address_of = [this](int family) -> std::optional<DatagramSource> {
    for (size_t i = 0; i < inner_.size(); ++i) {
      if (inner_family_[i] != family) continue;
      sockaddr_storage ss{};
      socklen_t len = sizeof ss;
      if (::getsockname(inner_[i].get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return std::nullopt;
      return DatagramSource::from(ss, len);
    }
    return std::nullopt;
  };
  if (domain == AF_INET) return address_of(AF_INET);
  if (domain != AF_INET6) return std::nullopt;
  if (auto v6 = address_of(AF_INET6)) return v6;
  auto v4 = address_of(AF_INET);
  if (!v4) return std::nullopt;
  // An AF_INET6 socket reaches the IPv4 inner socket through the IPv4-mapped address (unless it is IPv6-only:
  // then its connect fails, as the kernel says).
  const auto* sin = reinterpret_cast<const sockaddr_in*>(&v4->addr);
  DatagramSource mapped;
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&mapped.addr);
  sin6->sin6_family = AF_INET6;
  sin6->sin6_port = sin->sin_port;
  sin6->sin6_addr.s6_addr[10] = sin6->sin6_addr.s6_addr[11] = 0xff;
  std::memcpy(&sin6->sin6_addr.s6_addr[12], &sin->sin_addr, 4);
  mapped.len = sizeof(sockaddr_in6);
  return mapped;
}

bool DatagramRelay::has_room() {
  if (by_source_.size() >= options_.max_associations) expire(Clock::now());
  return by_source_.size() < options_.max_associations;
}

Status DatagramRelay::associate(const DatagramSource& source, UniqueFd upstream, DatagramTarget target) {
  std::string key = source.key();
  if (key.empty()) return Status::error_with_errno(EINVAL, "datagram relay: a source of another family");
  size_t inner = inner_.size();
  for (size_t i = 0; i < inner_.size(); ++i) {
    if (inner_family_[i] == source.addr.ss_family) inner = i;
  }
  if (inner == inner_.size()) {
    return Status::error_with_errno(ENETUNREACH, "datagram relay: no inner socket of that family");
  }
  if (auto old = by_source_.find(key); old != by_source_.end()) end(old);
  if (!has_room()) {
    return Status::error_with_errno(EAGAIN,
                                    "datagram relay: " + std::to_string(options_.max_associations) + " associations");
  }
  uint64_t id = next_id_++;
  OI_TRY_CTX(loop_.add(upstream.get(), EPOLLIN, kTagBit | kUpstreamBit | id), "datagram relay: upstream socket");
  Association a;
  a.id = id;
  a.source = source;
  a.inner = inner;
  a.upstream = std::move(upstream);
  a.target = std::move(target);
  a.started = a.last_active = Clock::now();
  by_id_.emplace(id, key);
  by_source_.emplace(std::move(key), std::move(a));
  return Status::ok();
}

void DatagramRelay::forget(const DatagramSource& source) {
  if (auto it = by_source_.find(source.key()); it != by_source_.end()) end(it);
}

void DatagramRelay::retain(const std::vector<DatagramSource>& live) {
  std::set<std::string> keys;
  for (const DatagramSource& s : live) keys.insert(s.key());
  for (auto it = by_source_.begin(); it != by_source_.end();) {
    auto next = std::next(it);
    if (!keys.count(it->first)) end(it);
    it = next;
  }
}

size_t DatagramRelay::end_refused(const std::function<std::string(const DatagramTarget&)>& refusal) {
  size_t ended = 0;
  for (auto it = by_source_.begin(); it != by_source_.end();) {
    auto next = std::next(it);
    if (std::string why = refusal(it->second.target); !why.empty()) {
      end(it, why);
      ++ended;
    }
    it = next;
  }
  return ended;
}

void DatagramRelay::end(std::map<std::string, Association>::iterator it, std::string_view reason) {
  Association& a = it->second;
  loop_.remove(a.upstream.get());
  emit_closed(events_, a.target.host, a.target.port, a.bytes_up, a.bytes_down, elapsed_ms(a.started, Clock::now()),
              reason);
  by_id_.erase(a.id);
  by_source_.erase(it);  // closes the upstream socket
}

void DatagramRelay::on_event(uint64_t tag, uint32_t) {
  uint64_t low = tag & ~(kTagBit | kUpstreamBit);
  if (tag & kUpstreamBit) {
    from_upstream(low);
  } else if (low < inner_.size()) {
    from_inner(low);
  }
}

// Datagrams from inside: each goes out on its source's association, or is dropped.
void DatagramRelay::from_inner(size_t index) {
  const int fd = inner_[index].get();
  for (uint32_t i = 0; i < options_.burst; ++i) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    // MSG_TRUNC: the datagram's real length, so that a larger one than the buffer is seen and dropped whole.
    ssize_t n = ::recvfrom(fd, buffer_.data(), buffer_.size(), MSG_TRUNC | MSG_DONTWAIT,
                           reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN: drained; anything else concerns one datagram (already gone)
    }
    auto it = by_source_.find(DatagramSource::from(from, from_len).key());
    if (it == by_source_.end() || static_cast<size_t>(n) > buffer_.size()) {
      ++dropped_;
      continue;
    }
    Association& a = it->second;
    if (::send(a.upstream.get(), buffer_.data(), static_cast<size_t>(n), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
      ++dropped_;  // a full buffer, or an ICMP error of an earlier datagram (ECONNREFUSED): UDP loses it
      continue;
    }
    a.bytes_up += static_cast<uint64_t>(n);
    a.last_active = Clock::now();
  }
}

// Replies from the destination (the upstream socket is connected to it: nobody else's reach it), back to the source.
void DatagramRelay::from_upstream(uint64_t id) {
  auto key = by_id_.find(id);
  if (key == by_id_.end()) return;
  auto it = by_source_.find(key->second);
  if (it == by_source_.end()) return;
  Association& a = it->second;
  for (uint32_t i = 0; i < options_.burst; ++i) {
    ssize_t n = ::recv(a.upstream.get(), buffer_.data(), buffer_.size(), MSG_TRUNC | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      continue;  // an ICMP error reported on the socket (ECONNREFUSED): consumed; the program sees a lost datagram
    }
    if (static_cast<size_t>(n) > buffer_.size()) {
      ++dropped_;
      continue;
    }
    if (::sendto(inner_[a.inner].get(), buffer_.data(), static_cast<size_t>(n), MSG_DONTWAIT | MSG_NOSIGNAL,
                 reinterpret_cast<const sockaddr*>(&a.source.addr), a.source.len) < 0) {
      ++dropped_;
      continue;
    }
    a.bytes_down += static_cast<uint64_t>(n);
    a.last_active = Clock::now();
  }
}

int DatagramRelay::next_timeout_ms() const {
  if (by_source_.empty()) return -1;
  Clock::time_point earliest = Clock::time_point::max();
  for (const auto& [key, a] : by_source_) earliest = std::min(earliest, a.last_active);
  auto due = earliest + std::chrono::milliseconds(options_.idle_timeout_ms);
  auto now = Clock::now();
  if (due <= now) return 0;
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(due - now).count()) + 1;
}

void DatagramRelay::on_timer() { expire(Clock::now()); }

void DatagramRelay::expire(Clock::time_point now) {
  const auto idle = std::chrono::milliseconds(options_.idle_timeout_ms);
  for (auto it = by_source_.begin(); it != by_source_.end();) {
    auto next = std::next(it);
    if (now - it->second.last_active >= idle) end(it);
    it = next;
  }
}

}  // namespace oishell::relay
