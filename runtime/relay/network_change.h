#pragma once
// What a changed network policy no longer allows among the flows already open past the relay's own connections:
// the sockets the connect broker installed (kernel to kernel, `inspect: false`) and the datagram associations.
// Pure: the relay's loop asks it for each open flow when update_network() puts new rules in force (relay.cc); the
// relay's own connections answer for themselves (Connection::policy_refusal).
#include <cstdint>
#include <string>

#include "policy/net_rules.h"

namespace oishell::relay {

// Why `spec` no longer allows an open flow to `host`:`port` connected to `address` (an IP literal; unparsable:
// not checked), or "" when it still does. `uninspected` (a broker-installed TCP socket): a rule that now inspects
// the destination ends it too, since nothing can inspect a socket the kernel carries end to end.
std::string refusal_after_change(const NetworkSpec& spec, const std::string& host, uint16_t port,
                                 const std::string& address, HostRule::Protocol protocol, bool uninspected);

}  // namespace oishell::relay
