#pragma once
// The namespace probes of runtime/outside/kernel_probe: each runs in a forked child that enters a new user (+ mount, net)
// namespace and tries what the sandbox will do. "ok" or the failing call with its errno.
#include <string>

namespace oishell::probe_ns {

struct NsResults {
  std::string userns = "not run";  // unshare(user|mount|net) + id maps + a private mount
  std::string tun = "not run";     // open /dev/net/tun + TUNSETIFF inside
  std::string nftables = "not run";  // create an nftables table inside (netlink batch)
};

NsResults run();

}  // namespace oishell::probe_ns
