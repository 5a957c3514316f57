#pragma once
// The sandbox's network namespace, from inside: loopback up and the relay's listening sockets.
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"
#include "runtime/relay/relay.h"

namespace oishell {

// Sets `lo` up (rtnetlink through libnl-route). Must run inside the new network namespace.
Status bring_up_loopback();

// In proxy mode: listening, non-blocking sockets on 127.0.0.1 and ::1 at the HTTP and SOCKS ports of `spec`.
// IPv4 listeners are required; an IPv6 listener that cannot be opened (IPv6 disabled) is reported in
// `degraded` instead. Mode none: no listeners.
Result<std::vector<relay::Listener>> open_relay_listeners(const NetworkSpec& spec, std::vector<std::string>* degraded);

}  // namespace oishell
