// The DNS stub: see dns_stub.h. One query's path: read (UDP datagram or TCP frame) -> parse_query() -> the
// policy's verdict for the name -> an answer now (deny, ask, PTR, other types, malformed) or after the name's
// resolution (allow), which A and AAAA queries for the same name share.
#include "runtime/broker/dns_stub.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>

#include <cerrno>

#include "runtime/relay/audit.h"

namespace oishell::broker {
namespace {

using relay::Clock;

constexpr uint64_t kKindShift = 48;
constexpr uint64_t kIdMask = (uint64_t{1} << kKindShift) - 1;
enum Kind : uint64_t { kUdp = 1, kListener = 2, kConn = 3, kResolveTimer = 4, kIdleTimer = 5 };

uint64_t make_tag(Kind kind, uint64_t id) { return DnsStub::kDnsTagBit | (uint64_t{kind} << kKindShift) | (id & kIdMask); }
Kind kind_of(uint64_t tag) { return static_cast<Kind>((tag >> kKindShift) & 0xff); }
uint64_t id_of(uint64_t tag) { return tag & kIdMask; }

// Work per event on one socket before the others get their turn; the socket is re-armed (EPOLL_CTL_MOD reports
// it again while it has more), so that a flood of queries cannot starve the relay's connections.
constexpr int kDatagramBurst = 64;
constexpr int kAcceptBurst = 16;
constexpr size_t kUdpBuffer = 4096;  // a query is < 300 bytes; a larger datagram is dropped
constexpr size_t kTcpRead = 4096;
constexpr uint32_t kUdpEvents = EPOLLIN | EPOLLET;
constexpr uint32_t kConnEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;

Status set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return Status::from_errno(errno, "fcntl(O_NONBLOCK)");
  return Status::ok();
}

bool is_reverse_zone(const std::string& name) {
  return name == "in-addr.arpa" || name == "ip6.arpa" || name.ends_with(".in-addr.arpa") ||
         name.ends_with(".ip6.arpa");
}

}  // namespace

DnsStub::DnsStub(relay::EventLoop& loop, const NetworkSpec& spec, NameMap& names, EventSink& events, Resolve resolve,
                 DnsStubOptions options)
    : loop_(loop), spec_(spec), names_(names), events_(events), resolve_(std::move(resolve)), options_(options) {}

DnsStub::~DnsStub() {
  for (const UniqueFd& fd : udp_) loop_.remove(fd.get());
  for (const UniqueFd& fd : listeners_) loop_.remove(fd.get());
  for (const auto& [id, conn] : conns_) loop_.remove(conn.fd.get());
}

Status DnsStub::serve(std::vector<UniqueFd> udp_sockets, std::vector<UniqueFd> tcp_listeners) {
  if (serving_) return Status::error("dns stub: serve() called twice");
  serving_ = true;
  for (size_t i = 0; i < udp_sockets.size(); ++i) {
    OI_TRY_CTX(set_nonblocking(udp_sockets[i].get()), "dns stub: udp socket");
    OI_TRY_CTX(loop_.add(udp_sockets[i].get(), kUdpEvents, make_tag(kUdp, i)), "dns stub: udp socket");
    udp_.push_back(std::move(udp_sockets[i]));
  }
  for (size_t i = 0; i < tcp_listeners.size(); ++i) {
    OI_TRY_CTX(set_nonblocking(tcp_listeners[i].get()), "dns stub: tcp listener");
    OI_TRY_CTX(loop_.add(tcp_listeners[i].get(), kUdpEvents, make_tag(kListener, i)), "dns stub: tcp listener");
    listeners_.push_back(std::move(tcp_listeners[i]));
  }
  return Status::ok();
}

void DnsStub::on_event(uint64_t tag, uint32_t events) {
  if (!owns(tag)) return;
  switch (kind_of(tag)) {
    case kUdp:
      if (id_of(tag) < udp_.size()) read_udp(id_of(tag), tag);
      break;
    case kListener:
      if (id_of(tag) < listeners_.size()) accept_tcp(id_of(tag), tag);
      break;
    case kConn:
      on_tcp_event(id_of(tag), events);
      break;
    case kResolveTimer:
    case kIdleTimer:
      break;
  }
  run_completions();
}

// --- UDP -----------------------------------------------------------------------------------------------------

void DnsStub::read_udp(size_t index, uint64_t tag) {
  const int fd = udp_[index].get();
  uint8_t buffer[kUdpBuffer];
  for (int i = 0; i < kDatagramBurst; ++i) {
    Origin origin;
    origin.udp_index = index;
    origin.peer_len = sizeof origin.peer;
    ssize_t n = ::recvfrom(fd, buffer, sizeof buffer, MSG_TRUNC | MSG_DONTWAIT,
                           reinterpret_cast<sockaddr*>(&origin.peer), &origin.peer_len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN: drained (other errors concern one datagram: the next event reads on)
    }
    if (static_cast<size_t>(n) > sizeof buffer) continue;  // truncated: not a query of ours
    handle_message(std::span<const uint8_t>(buffer, static_cast<size_t>(n)), origin);
  }
  (void)loop_.modify(fd, kUdpEvents, tag);  // more may be waiting: reported again
}

// --- TCP -----------------------------------------------------------------------------------------------------

void DnsStub::accept_tcp(size_t index, uint64_t tag) {
  const int fd = listeners_[index].get();
  for (int i = 0; i < kAcceptBurst; ++i) {
    UniqueFd client(::accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) report_error("", Status::from_errno(errno, "dns stub: accept4").message());
      return;
    }
    if (conns_.size() >= options_.max_tcp_connections) continue;  // closed: the client retries or gives up
    uint64_t id = next_conn_id_++;
    if (!loop_.add(client.get(), kConnEvents, make_tag(kConn, id)).is_ok()) continue;
    TcpConn& conn = conns_[id];
    conn.fd = std::move(client);
    conn.last_active = Clock::now();
    timers_.push(conn.last_active + std::chrono::milliseconds(options_.tcp_idle_timeout_ms), make_tag(kIdleTimer, id));
  }
  (void)loop_.modify(fd, kUdpEvents, tag);
}

void DnsStub::on_tcp_event(uint64_t id, uint32_t events) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  if ((events & EPOLLERR) || !serve_tcp(it->second, id)) close_tcp(id);
}

bool DnsStub::serve_tcp(TcpConn& conn, uint64_t id) {
  uint8_t chunk[kTcpRead];
  while (!conn.eof) {
    ssize_t n = ::read(conn.fd.get(), chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return false;
    }
    if (n == 0) {
      conn.eof = true;
      break;
    }
    conn.last_active = Clock::now();
    conn.in.insert(conn.in.end(), chunk, chunk + n);
    // Whole frames are answered as they arrive: the input never holds more than one partial frame and a chunk.
    size_t used = 0;
    while (conn.in.size() - used >= 2) {
      size_t length = (size_t{conn.in[used]} << 8) | conn.in[used + 1];
      if (length == 0) return false;
      if (conn.in.size() - used - 2 < length) break;
      Origin origin;
      origin.tcp = true;
      origin.conn = id;
      handle_message(std::span<const uint8_t>(conn.in.data() + used + 2, length), origin);
      used += 2 + length;
    }
    conn.in.erase(conn.in.begin(), conn.in.begin() + static_cast<std::ptrdiff_t>(used));
    if (conn.broken) return false;  // asks without reading the answers, or gone
  }
  if (!flush_tcp(conn)) return false;
  return !(conn.eof && conn.waiting == 0 && conn.out.empty());
}

bool DnsStub::flush_tcp(TcpConn& conn) {
  size_t sent = 0;
  while (sent < conn.out.size()) {
    ssize_t n = ::send(conn.fd.get(), conn.out.data() + sent, conn.out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      conn.broken = true;
      return false;
    }
    sent += static_cast<size_t>(n);
  }
  conn.out.erase(conn.out.begin(), conn.out.begin() + static_cast<std::ptrdiff_t>(sent));
  if (conn.out.size() > options_.max_tcp_output) conn.broken = true;
  return !conn.broken;
}

void DnsStub::close_if_finished(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  const TcpConn& conn = it->second;
  if (conn.broken || (conn.eof && conn.waiting == 0 && conn.out.empty())) close_tcp(id);
}

void DnsStub::close_tcp(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  loop_.remove(it->second.fd.get());
  conns_.erase(it);  // answers still to come for it are dropped (the connection is looked up by id)
}

// --- Queries -------------------------------------------------------------------------------------------------

void DnsStub::handle_message(std::span<const uint8_t> message, const Origin& origin) {
  dns::Parsed parsed = dns::parse_query(message);
  switch (parsed.outcome) {
    case dns::ParseOutcome::ignore:
      return;
    case dns::ParseOutcome::format_error:
      return reply(parsed.query, origin, dns::Rcode::formerr);
    case dns::ParseOutcome::not_implemented:
      return reply(parsed.query, origin, dns::Rcode::notimp);
    case dns::ParseOutcome::query:
      return answer_query(std::move(parsed.query), origin);
  }
}

void DnsStub::answer_query(dns::Query query, const Origin& origin) {
  if (query.edns && query.edns_version > 0) return reply(query, origin, dns::Rcode::badvers);
  if (query.klass != dns::kClassIn) return reply(query, origin, dns::Rcode::refused);
  auto name = normalise_host(query.name);
  if (!name) return reply(query, origin, dns::Rcode::formerr);
  // A name that reads as an IP address ("192.0.2.1." has no such top-level domain): nothing to look up.
  if (IpAddress::parse(*name)) return reply(query, origin, dns::Rcode::nxdomain);
  // Reverse names are answered here: a synthetic address's name, else nothing (no upstream query either).
  if (is_reverse_zone(*name)) {
    if (query.type == dns::rrtype::ptr) {
      if (auto address = dns::parse_reverse_name(*name)) {
        if (auto mapped = names_.name_of(*address)) {
          return reply(query, origin, dns::Rcode::noerror, {dns::ptr_record(*mapped, options_.ttl_seconds)});
        }
      }
    }
    return reply(query, origin, dns::Rcode::nxdomain);
  }
  // A localhost name (is_localhost_name) is the sandbox's own loopback, as /etc/hosts says on most hosts; never a
  // synthetic address, which would send "localhost" out through the broker as if it were a remote host.
  if (is_localhost_name(*name)) {
    if (query.type != dns::rrtype::a && query.type != dns::rrtype::aaaa) return reply(query, origin, dns::Rcode::noerror);
    const IpAddress& loopback = localhost_addresses()[query.type == dns::rrtype::a ? 0 : 1];
    return reply(query, origin, dns::Rcode::noerror, {dns::address_record(loopback, options_.ttl_seconds)});
  }
  NetDecision decision = decide_name(spec_, *name);
  switch (decision.verdict) {
    case NetDecision::Verdict::deny:
      report_denied(*name, "denied by policy", decision.rule);
      return reply(query, origin, dns::Rcode::nxdomain);
    case NetDecision::Verdict::ask:
      if (query.type != dns::rrtype::a && query.type != dns::rrtype::aaaa) return reply(query, origin, dns::Rcode::noerror);
      return answer_address(query, origin, *name);  // the question comes at connect time, with the port
    case NetDecision::Verdict::allow:
      if (query.type != dns::rrtype::a && query.type != dns::rrtype::aaaa) return reply(query, origin, dns::Rcode::noerror);
      return look_up(*name, std::move(query), origin);
  }
}

void DnsStub::look_up(const std::string& name, dns::Query query, const Origin& origin) {
  if (auto joined = pending_names_.find(name); joined != pending_names_.end()) {
    if (pending_queries_ >= options_.max_pending) return reply(query, origin, dns::Rcode::servfail);
    pending_[joined->second].waiters.push_back({std::move(query), origin});
    ++pending_queries_;
    if (auto conn = conns_.find(origin.conn); origin.tcp && conn != conns_.end()) ++conn->second.waiting;
    return;
  }
  if (pending_queries_ >= options_.max_pending) return reply(query, origin, dns::Rcode::servfail);
  const uint64_t id = next_pending_id_++;
  Pending& pending = pending_[id];
  pending.name = name;
  pending.waiters.push_back({std::move(query), origin});
  ++pending_queries_;
  if (auto conn = conns_.find(origin.conn); origin.tcp && conn != conns_.end()) ++conn->second.waiting;
  pending_names_[name] = id;
  // A pinned name is not looked up: its address is the answer (still guarded).
  if (auto pinned = spec_.hosts.find(name); pinned != spec_.hosts.end()) {
    auto address = IpAddress::parse(pinned->second);
    completed_.emplace_back(id, address ? Result<std::vector<IpAddress>>(std::vector<IpAddress>{*address})
                                        : Result<std::vector<IpAddress>>(Status::error("hosts: `" + pinned->second +
                                                                                       "` is not an IP address")));
    return;
  }
  timers_.push(Clock::now() + std::chrono::milliseconds(options_.resolve_timeout_ms), make_tag(kResolveTimer, id));
  std::weak_ptr<bool> alive = alive_;
  resolve_(name, [this, alive, id](Result<std::vector<IpAddress>> result) {
    if (alive.expired()) return;
    completed_.emplace_back(id, std::move(result));
  });
}

void DnsStub::run_completions() {
  while (!completed_.empty()) {
    auto batch = std::move(completed_);
    completed_.clear();
    for (auto& [id, result] : batch) complete(id, std::move(result));
  }
}

void DnsStub::complete(uint64_t pending_id, Result<std::vector<IpAddress>> result) {
  auto it = pending_.find(pending_id);
  if (it == pending_.end()) return;  // timed out meanwhile
  Pending pending = std::move(it->second);
  pending_.erase(it);
  pending_names_.erase(pending.name);
  pending_queries_ -= pending.waiters.size();
  for (const Waiter& w : pending.waiters) {
    if (!w.origin.tcp) continue;
    if (auto conn = conns_.find(w.origin.conn); conn != conns_.end()) --conn->second.waiting;
  }
  // The guard on every address; what survived, by family.
  bool v4 = false, v6 = false;
  std::string refusal;
  if (result) {
    for (const IpAddress& address : *result) {
      std::string why = check_resolved_address(spec_, address);
      if (!why.empty()) {
        if (refusal.empty()) refusal = why;
        continue;
      }
      (address.family == IpAddress::Family::v4 ? v4 : v6) = true;
    }
  }
  const bool all_refused = result && !result->empty() && !v4 && !v6;
  if (all_refused) report_denied(pending.name, refusal, "private-address guard");
  if (!result && result.status().errno_value() != ENOENT && result.status().errno_value() != ENODATA) {
    report_error(pending.name, "dns: " + result.status().message());
  }
  for (const Waiter& w : pending.waiters) {
    if (w.origin.tcp && !conns_.count(w.origin.conn)) continue;  // the client is gone
    if (!result) {
      int err = result.status().errno_value();
      reply(w.query, w.origin, err == ENOENT ? dns::Rcode::nxdomain : err == ENODATA ? dns::Rcode::noerror
                                                                                      : dns::Rcode::servfail);
    } else if (all_refused) {
      reply(w.query, w.origin, dns::Rcode::refused);
    } else if (w.query.type == dns::rrtype::a ? v4 : v6) {
      answer_address(w.query, w.origin, pending.name);
    } else {
      reply(w.query, w.origin, dns::Rcode::noerror);  // none of this family (or only the other one survived)
    }
  }
  // Connections that failed on these answers, or only waited for them after their client's EOF.
  for (const Waiter& w : pending.waiters) {
    if (w.origin.tcp) close_if_finished(w.origin.conn);
  }
}

void DnsStub::answer_address(const dns::Query& query, const Origin& origin, const std::string& name) {
  auto family = query.type == dns::rrtype::a ? IpAddress::Family::v4 : IpAddress::Family::v6;
  auto address = names_.address_for(name, family);
  if (!address) {
    report_error(name, "dns: no synthetic address left (" + std::to_string(names_.size()) + " names given out)");
    return reply(query, origin, dns::Rcode::servfail);
  }
  reply(query, origin, dns::Rcode::noerror, {dns::address_record(*address, options_.ttl_seconds)});
}

void DnsStub::reply(const dns::Query& query, const Origin& origin, dns::Rcode rcode,
                    const std::vector<dns::Record>& answers) {
  std::vector<uint8_t> message =
      dns::build_response(query, rcode, answers, dns::max_response_size(query, origin.tcp));
  if (!origin.tcp) {
    if (origin.udp_index >= udp_.size()) return;
    // A full socket buffer drops the answer, as the network would: the client asks again.
    [[maybe_unused]] ssize_t n =
        ::sendto(udp_[origin.udp_index].get(), message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                 reinterpret_cast<const sockaddr*>(&origin.peer), origin.peer_len);
    return;
  }
  auto it = conns_.find(origin.conn);
  if (it == conns_.end()) return;
  TcpConn& conn = it->second;
  conn.out.push_back(static_cast<uint8_t>(message.size() >> 8));
  conn.out.push_back(static_cast<uint8_t>(message.size()));
  conn.out.insert(conn.out.end(), message.begin(), message.end());
  (void)flush_tcp(conn);  // a failure marks it broken: closed by serve_tcp() or complete()
}

// --- Deadlines and events ------------------------------------------------------------------------------------

int DnsStub::next_timeout_ms() const { return timers_.next_timeout_ms(Clock::now()); }

void DnsStub::on_timer() {
  std::vector<uint64_t> due;
  const Clock::time_point now = Clock::now();
  timers_.pop_due(now, due);
  for (uint64_t key : due) {
    const uint64_t id = id_of(key);
    if (kind_of(key) == kResolveTimer) {
      if (pending_.count(id)) {
        completed_.emplace_back(id, Status::error("cannot resolve: no answer within " +
                                                  std::to_string(options_.resolve_timeout_ms) + " ms"));
      }
    } else if (kind_of(key) == kIdleTimer) {
      auto it = conns_.find(id);
      if (it == conns_.end()) continue;
      auto idle_until = it->second.last_active + std::chrono::milliseconds(options_.tcp_idle_timeout_ms);
      if (idle_until <= now && it->second.waiting == 0) {
        close_tcp(id);
      } else {
        timers_.push(std::max(idle_until, now + std::chrono::milliseconds(100)), key);
      }
    }
  }
  run_completions();
}

bool DnsStub::recently_reported(const std::string& key) {
  const Clock::time_point now = Clock::now();
  const auto window = std::chrono::milliseconds(options_.denial_repeat_ms);
  if (reported_.size() >= 1024) std::erase_if(reported_, [&](const auto& e) { return now - e.second >= window; });
  if (reported_.size() >= 1024) reported_.clear();
  auto [it, inserted] = reported_.try_emplace(key, now);
  if (!inserted && now - it->second < window) return true;
  it->second = now;
  return false;
}

void DnsStub::report_denied(const std::string& name, const std::string& reason, const std::string& rule) {
  if (recently_reported("denied " + name + " " + rule)) return;
  relay::emit_denied(events_, "dns", name, 0, reason, rule);
}

void DnsStub::report_error(const std::string& name, const std::string& reason) {
  if (recently_reported("error " + name + " " + reason)) return;
  relay::emit_error(events_, name, 0, reason);
}

}  // namespace oishell::broker
