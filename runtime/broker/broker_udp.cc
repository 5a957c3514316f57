// The connect broker's UDP path: a datagram socket's connect(2) to a destination outside. Allowed only by a udp rule
// naming the host and port (policy/net_rules.h); then the destination is resolved and guarded as a TCP one is, a
// socket of the supervisor's is connected to the checked address, and the caller's own socket is connected to the
// datagram relay's inner socket (runtime/relay/datagram_relay.h), which copies its datagrams out and the replies
// back. The caller never holds a socket of the host's namespace: an unconnected sendto(2) outside stays
// unreachable (the sandbox's namespace has only `lo`). Every refusal is ENETUNREACH with a net.denied event.
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "runtime/broker/broker.h"
#include "runtime/broker/broker_request.h"
#include "runtime/broker/sandbox_udp_sockets.h"
#include "runtime/relay/audit.h"
#include "runtime/relay/datagram_relay.h"

namespace oishell::broker {
namespace {

constexpr char kProtocol[] = "udp";

std::optional<relay::DatagramSource> local_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return std::nullopt;
  auto source = relay::DatagramSource::from(ss, len);
  if (source.len == 0) return std::nullopt;
  return source;
}

}  // namespace

void Broker::forget_datagrams(Request& r) {
  if (!ctx_.datagrams || r.type != SOCK_DGRAM) return;
  if (auto source = local_address(r.sock.get())) ctx_.datagrams->forget(*source);
}

void Broker::reap_datagrams() {
  SandboxUnixSockets* sockets = sandbox_sockets();
  if (!sockets) return;  // the limit then holds until associations idle out
  auto live = sandbox_udp_sockets(sockets->diag_fd());
  if (!live) {
    relay::emit_error(*ctx_.events, "", 0, "broker: " + live.status().message());
    return;
  }
  ctx_.datagrams->retain(*live);
}

void Broker::start_outside_udp(Request& r, const std::string& host, bool literal) {
  r.host = host;
  if (r.fast_open) {
    deny(r, kProtocol, host, r.port, "only a connected datagram socket gets out (connect, then send)", "udp",
         ENETUNREACH);
    return;
  }
  int protocol = -1;
  socklen_t protocol_len = sizeof protocol;
  if (::getsockopt(r.sock.get(), SOL_SOCKET, SO_PROTOCOL, &protocol, &protocol_len) != 0 ||
      r.type != SOCK_DGRAM || protocol != IPPROTO_UDP) {
    deny(r, kProtocol, host, r.port, "only UDP datagrams are relayed (not ping, raw or UDP-Lite sockets)", "udp",
         ENETUNREACH);
    return;
  }
  if (ctx_.spec->mode == NetMode::none) {
    deny(r, kProtocol, host, r.port, "the network mode is none", "mode: none", ENETUNREACH);
    return;
  }
  NetDecision decision = decide(*ctx_.spec, host, r.port, HostRule::Protocol::udp);
  if (decision.verdict != NetDecision::Verdict::allow) {
    deny(r, kProtocol, host, r.port, "denied by policy", decision.rule, ENETUNREACH);
    return;
  }
  r.rule = decision.rule;
  if (!ctx_.datagrams || !ctx_.datagrams->inner_address(r.domain)) {
    deny(r, kProtocol, host, r.port, "no datagram relay", r.rule, ENETUNREACH);
    return;
  }
  resolve_then_start(r, host, literal, kProtocol, ENETUNREACH);  // as for TCP (broker.cc)
}

void Broker::start_datagrams(Request& r, std::vector<IpAddress> addresses) {
  if (!ctx_.datagrams) {  // checked in start_outside_udp(); the relay destroys it only after the broker
    deny(r, kProtocol, r.host, r.port, "no datagram relay", r.rule, ENETUNREACH);
    return;
  }
  std::string refusal;
  UniqueFd upstream;
  for (const IpAddress& a : addresses) {
    if (std::string why = check_resolved_address(*ctx_.spec, a); !why.empty()) {
      if (refusal.empty()) refusal = why;
      continue;
    }
    // The supervisor's socket takes the address's own family, whatever the caller's is: it never enters the sandbox.
    int family = a.family == IpAddress::Family::v4 ? AF_INET : AF_INET6;
    UniqueFd fd(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP));
    if (!fd) {
      r.last_error = Status::from_errno(errno, "socket").message();
      continue;
    }
    sockaddr_storage ss{};
    socklen_t len = detail::to_sockaddr(a, r.port, family, &ss);
    r.address = a.to_string();
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) {
      r.last_error = Status::from_errno(errno, "connect(" + r.address + ")").message();
      continue;
    }
    upstream = std::move(fd);
    break;
  }
  if (!upstream) {
    if (!refusal.empty() && r.last_error.empty()) {
      deny(r, kProtocol, r.host, r.port, refusal, "private-address guard", ENETUNREACH);
    } else {
      relay::emit_error(*ctx_.events, r.host, r.port, r.last_error.empty() ? "no address" : r.last_error);
      respond(r, 0, ENETUNREACH);
    }
    return;
  }
  if (!ctx_.datagrams->has_room()) reap_datagrams();
  if (!ctx_.datagrams->has_room()) {
    relay::emit_error(*ctx_.events, r.host, r.port, "datagram relay: too many associations");
    respond(r, 0, EAGAIN);
    return;
  }
  // The caller's own socket to the inner socket (a UDP connect completes at once; it binds an unbound socket to a
  // loopback address and port, which is then the association's key).
  std::optional<relay::DatagramSource> inner = ctx_.datagrams->inner_address(r.domain);
  if (!inner) {
    deny(r, kProtocol, r.host, r.port, "no datagram relay", r.rule, ENETUNREACH);
    return;
  }
  if (::connect(r.sock.get(), reinterpret_cast<const sockaddr*>(&inner->addr), inner->len) != 0) {
    respond(r, 0, errno);
    return;
  }
  std::optional<relay::DatagramSource> source = local_address(r.sock.get());
  Status associated = source ? ctx_.datagrams->associate(*source, std::move(upstream),
                                                         {r.host, r.port, r.rule, r.address})
                             : Status::from_errno(errno, "getsockname");
  if (!associated.is_ok()) {
    sockaddr unspec{};
    unspec.sa_family = AF_UNSPEC;
    ::connect(r.sock.get(), &unspec, sizeof unspec);  // not left pointing at the relay
    relay::emit_error(*ctx_.events, r.host, r.port, associated.message());
    respond(r, 0, associated.errno_value() ? associated.errno_value() : ENETUNREACH);
    return;
  }
  relay::emit_allowed(*ctx_.events, kProtocol, r.host, r.port, r.rule, r.address);
  respond(r, 0, 0);
}

}  // namespace oishell::broker
