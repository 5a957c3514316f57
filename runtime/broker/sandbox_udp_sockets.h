#pragma once
// The local addresses of the UDP sockets that exist in the sandbox's network namespace, from sock_diag
// (inet_diag, both families). The broker asks when the datagram relay's associations are all taken: an association
// whose source no socket holds any more (the program closed it) is ended then, instead of waiting for it to idle out.
#include <vector>

#include "base/status.h"
#include "runtime/relay/datagram_relay.h"

namespace oishell::broker {

// `diag_fd`: a NETLINK_SOCK_DIAG socket made in the sandbox's network namespace (SandboxUnixSockets::diag_fd()).
// IPv4-mapped addresses come back in their IPv4 form (DatagramSource::from).
Result<std::vector<relay::DatagramSource>> sandbox_udp_sockets(int diag_fd);

}  // namespace oishell::broker
