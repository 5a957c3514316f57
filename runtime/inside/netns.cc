#include "runtime/inside/netns.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <memory>

namespace oishell {
namespace {

struct NlSocketDeleter {
  void operator()(nl_sock* s) const { nl_socket_free(s); }
};
struct LinkDeleter {
  void operator()(rtnl_link* l) const { rtnl_link_put(l); }
};
struct AddrDeleter {
  void operator()(rtnl_addr* a) const { rtnl_addr_put(a); }
};
struct NlAddrDeleter {
  void operator()(nl_addr* a) const { nl_addr_put(a); }
};

Status nl_error(int err, const char* call) {
  return Status::error(std::string(call) + ": " + nl_geterror(err));
}

// A socket of `type` bound to the loopback address of `family` (127.0.0.1, or `v4_host` when given) at `port`;
// listening when it is a stream socket.
Result<UniqueFd> listen_on(int family, uint16_t port, int type = SOCK_STREAM, uint32_t v4_host = INADDR_LOOPBACK) {
  UniqueFd fd(::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return Status::from_errno(errno, "socket");
  int one = 1;
  if (type == SOCK_STREAM) ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage addr{};
  socklen_t len;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&addr);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    in->sin_addr.s_addr = htonl(v4_host);
    len = sizeof *in;
  } else {
    if (::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) {
      return Status::from_errno(errno, "setsockopt(IPV6_V6ONLY)");
    }
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    in6->sin6_addr = in6addr_loopback;
    len = sizeof *in6;
  }
  char v4_text[INET_ADDRSTRLEN] = "?";
  in_addr v4_addr{htonl(v4_host)};
  inet_ntop(AF_INET, &v4_addr, v4_text, sizeof v4_text);
  const std::string where = (family == AF_INET ? std::string(v4_text) + ":" : "[::1]:") + std::to_string(port);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    return Status::from_errno(errno, "bind(" + where + ")");
  }
  if (type == SOCK_STREAM && ::listen(fd.get(), 128) != 0) return Status::from_errno(errno, "listen(" + where + ")");
  return fd;
}

}  // namespace

namespace {

constexpr int kLoopbackIndex = 1;  // in a new network namespace `lo` is the first device (LOOPBACK_IFINDEX)

using NlSocket = std::unique_ptr<nl_sock, NlSocketDeleter>;

Result<NlSocket> route_socket() {
  NlSocket sock(nl_socket_alloc());
  if (!sock) return Status::error("nl_socket_alloc: out of memory");
  if (int err = nl_connect(sock.get(), NETLINK_ROUTE); err < 0) return nl_error(err, "nl_connect(NETLINK_ROUTE)");
  return sock;
}

using RtnlAddr = std::unique_ptr<rtnl_addr, AddrDeleter>;

Result<RtnlAddr> second_loopback_address(std::unique_ptr<nl_addr, NlAddrDeleter>* local) {
  RtnlAddr addr(rtnl_addr_alloc());
  const in_addr second{htonl(INADDR_LOOPBACK + 1)};
  local->reset(nl_addr_build(AF_INET, &second, sizeof second));
  if (!addr || !*local) return Status::error("rtnl_addr_alloc: out of memory");
  rtnl_addr_set_ifindex(addr.get(), kLoopbackIndex);
  if (int err = rtnl_addr_set_local(addr.get(), local->get()); err < 0) return nl_error(err, "rtnl_addr_set_local");
  rtnl_addr_set_prefixlen(addr.get(), 8);
  return addr;
}

}  // namespace

Status bring_up_loopback() {
  // One rtnetlink socket, and no dump of the link: its index is fixed.
  auto sock = route_socket();
  if (!sock.is_ok()) return sock.status();
  std::unique_ptr<rtnl_link, LinkDeleter> link(rtnl_link_alloc());
  std::unique_ptr<rtnl_link, LinkDeleter> change(rtnl_link_alloc());
  if (!link || !change) return Status::error("rtnl_link_alloc: out of memory");
  rtnl_link_set_ifindex(link.get(), kLoopbackIndex);
  rtnl_link_set_flags(change.get(), IFF_UP);
  if (int err = rtnl_link_change(sock->get(), link.get(), change.get(), 0); err < 0) {
    return nl_error(err, "rtnl_link_change(lo, up)");
  }
  std::unique_ptr<nl_addr, NlAddrDeleter> local;
  auto addr = second_loopback_address(&local);
  if (!addr.is_ok()) return addr.status();
  if (int err = rtnl_addr_add(sock->get(), addr->get(), 0); err < 0) {
    return nl_error(err, "rtnl_addr_add(127.0.0.2/8, lo)");
  }
  return Status::ok();
}

Status remove_second_loopback_address() {
  auto sock = route_socket();
  if (!sock.is_ok()) return sock.status();
  std::unique_ptr<nl_addr, NlAddrDeleter> local;
  auto addr = second_loopback_address(&local);
  if (!addr.is_ok()) return addr.status();
  if (int err = rtnl_addr_delete(sock->get(), addr->get(), 0); err < 0) {
    return nl_error(err, "rtnl_addr_delete(127.0.0.2/8, lo)");
  }
  return Status::ok();
}

Result<std::vector<relay::Listener>> open_relay_listeners(const NetworkSpec& spec,
                                                          std::vector<std::string>* degraded) {
  std::vector<relay::Listener> listeners;
  if (spec.mode == NetMode::none) return listeners;
  const std::pair<uint16_t, relay::Protocol> ports[] = {{spec.http_proxy_port, relay::Protocol::http},
                                                         {spec.socks_proxy_port, relay::Protocol::socks5}};
  for (const auto& [port, protocol] : ports) {
    auto v4 = listen_on(AF_INET, port);
    if (!v4.is_ok()) return v4.status();
    listeners.push_back({std::move(v4.value()), protocol});
    auto v6 = listen_on(AF_INET6, port);
    if (!v6.is_ok()) {
      degraded->push_back("relay: no listener on [::1]:" + std::to_string(port) + " (" + v6.status().message() + ")");
      continue;
    }
    listeners.push_back({std::move(v6.value()), protocol});
  }
  return listeners;
}

Result<DnsSockets> open_dns_sockets(const NetworkSpec& spec, std::vector<std::string>* degraded) {
  DnsSockets sockets;
  if (spec.mode == NetMode::none) return sockets;
  for (int family : {AF_INET, AF_INET6}) {
    for (int type : {SOCK_DGRAM, SOCK_STREAM}) {
      auto fd = listen_on(family, spec.dns_port, type);
      if (!fd.is_ok()) {
        if (family == AF_INET) return fd.status().with_context(type == SOCK_DGRAM ? "dns (udp)" : "dns (tcp)");
        degraded->push_back(std::string("dns: no ") + (type == SOCK_DGRAM ? "udp" : "tcp") + " socket on [::1]:" +
                            std::to_string(spec.dns_port) + " (" + fd.status().message() + ")");
        continue;
      }
      (type == SOCK_DGRAM ? sockets.udp : sockets.tcp).push_back(std::move(fd.value()));
    }
  }
  return sockets;
}

Result<std::vector<UniqueFd>> open_datagram_relay_sockets(const NetworkSpec& spec,
                                                          std::vector<std::string>* degraded) {
  std::vector<UniqueFd> sockets;
  if (spec.mode == NetMode::none) return sockets;
  // Only a udp rule lets a datagram out: without one, nothing to relay (and two sockets less to make at start).
  if (!spec.datagram_relay) return sockets;
  // 127.0.0.2: apart from what programs inside bind on 127.0.0.1.
  auto v4 = listen_on(AF_INET, 0, SOCK_DGRAM, INADDR_LOOPBACK + 1);
  if (!v4.is_ok()) return v4.status().with_context("datagram relay");
  sockets.push_back(std::move(v4.value()));
  auto v6 = listen_on(AF_INET6, 0, SOCK_DGRAM);
  if (!v6.is_ok()) {
    degraded->push_back("datagram relay: no socket on [::1] (" + v6.status().message() + ")");
  } else {
    sockets.push_back(std::move(v6.value()));
  }
  return sockets;
}

}  // namespace oishell
