#pragma once
// When this machine will not let a sandbox be built (no user namespace, a container's seccomp profile, a masked
// /proc, Ubuntu's AppArmor restriction), which layer is unavailable and the one setting that enables it. `oishell
// doctor` and a failing `oishell run` print the same words.
#include <optional>
#include <string>

namespace oishell {

enum class ContainerKind { none, docker, podman, kubernetes, other };

// What the advice is decided from; host_signals() reads it from this machine.
struct HostSignals {
  unsigned uid = 0;
  std::optional<long> max_user_namespaces;                   // user.max_user_namespaces
  std::optional<long> unprivileged_userns_clone;             // kernel.unprivileged_userns_clone (Debian)
  std::optional<long> apparmor_restrict_unprivileged_userns;  // Ubuntu 23.10+
  ContainerKind container = ContainerKind::none;
  int seccomp_mode = 0;  // /proc/self/status Seccomp: 2 = already under a filter
};

HostSignals host_signals();

// The advice for a failure to build the sandbox (`failure` is the error's text, e.g. "namespaces: clone3(...):
// EPERM"); "" when nothing here explains it.
std::string sandbox_blocked_advice(const HostSignals& host, const std::string& failure);

}  // namespace oishell
