#pragma once
// The sandbox's network namespace, from inside: loopback up and the relay's listening sockets.
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"
#include "runtime/relay/relay.h"

namespace oishell {

// Sets `lo` up (rtnetlink through libnl-route) and adds 127.0.0.2/8 to it. Must run inside the new network
// namespace; init does it before the policy comes (it waits for it anyway), so for either network mode. Why the
// second address: glibc's getaddrinfo with AI_ADDRCONFIG counts IPv4 as configured only for an address other than
// 127.0.0.1 (and IPv6 for one other than ::1): with `lo` alone it fails an AF_INET lookup with EAI_NONAME before
// asking the DNS stub (`getent ahostsv4`, `-4` options). The whole of 127.0.0.0/8 is local already: no route
// changes. AF_UNSPEC lookups with AI_ADDRCONFIG (getaddrinfo's default hints) now ask for IPv4 only.
Status bring_up_loopback();

// Mode none (no DNS stub): takes 127.0.0.2 away again, so that lookups with AI_ADDRCONFIG fail at once, as on a
// host without a network, instead of asking a name server nothing serves.
Status remove_second_loopback_address();

// In proxy mode: listening, non-blocking sockets on 127.0.0.1 and ::1 at the HTTP and SOCKS ports of `spec`.
// IPv4 listeners are required; an IPv6 listener that cannot be opened (IPv6 disabled) is reported in
// `degraded` instead. Mode none: no listeners.
Result<std::vector<relay::Listener>> open_relay_listeners(const NetworkSpec& spec, std::vector<std::string>* degraded);

// The DNS stub's sockets (runtime/broker/dns_stub.h), served outside by the relay's loop.
struct DnsSockets {
  std::vector<UniqueFd> udp;  // bound
  std::vector<UniqueFd> tcp;  // listening
};

// In proxy mode: UDP bound and TCP listening on 127.0.0.1 and ::1 at spec.dns_port, non-blocking. Port 53 needs
// CAP_NET_BIND_SERVICE over this network namespace: init has it (its user namespace owns the network namespace)
// until it drops its capabilities, later. IPv4 is required; IPv6 degrades as the relay's listeners do. Mode none:
// nothing.
Result<DnsSockets> open_dns_sockets(const NetworkSpec& spec, std::vector<std::string>* degraded);

// In proxy mode: the datagram relay's inner sockets (runtime/relay/datagram_relay.h), UDP bound on 127.0.0.2 and
// [::1] at ephemeral ports, non-blocking; served outside. After add_loopback_ipv4_address(). IPv4 is required; IPv6
// degrades as the relay's listeners do. Mode none, or no allow rule with `protocol: udp`
// (spec.datagram_relay): nothing.
Result<std::vector<UniqueFd>> open_datagram_relay_sockets(const NetworkSpec& spec, std::vector<std::string>* degraded);

}  // namespace oishell
