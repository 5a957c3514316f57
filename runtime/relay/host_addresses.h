#pragma once
// The addresses of the machine the relay runs on, for the private-address guard: a destination that is one of
// them reaches the services of this machine (a database listening on every interface, a development server), which
// no rule about names means to allow. The only side-effecting part of the guard; the check itself stays pure
// (check_resolved_address in policy/net_rules.h, against NetworkSpec::host_addresses).
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"

namespace oishell::relay {

// Every IPv4 and IPv6 address of every interface of the calling thread's network namespace (getifaddrs(3)),
// loopback included, each once, in the order listed.
Result<std::vector<IpAddress>> machine_addresses();

// Adds machine_addresses() to spec.host_addresses (those already there, e.g. a test's, are kept). Called once, when
// the relay is created: an address added to an interface later is not known to it.
Status add_host_addresses(NetworkSpec& spec);

}  // namespace oishell::relay
