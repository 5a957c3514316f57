#pragma once
// The "ideal" forwarders of the relay benchmark: the least a userspace TCP forwarder can do. No policy, no parsing,
// no event loop: per connection, one thread per direction with blocking calls, then shutdown(SHUT_WR). Two ways
// to move the bytes: splice(2) socket -> pipe (1 MiB) -> socket, or read(2)/write(2) through a 1 MiB buffer (what
// the relay does). Their throughput is the upper bound a userspace relay reaches on the machine.
#include <cstdint>

namespace oishell::bench {

enum class ForwardBy { splice, copy };

// Serves `listener` (accept loop on its own detached thread), forwarding every connection to ip:port.
void start_ideal_forwarder(int listener, const char* ip, uint16_t port, ForwardBy how);

}  // namespace oishell::bench
