#pragma once
// What this kernel gives the sandbox, probed once per process (`oishell doctor`, and the supervisor's start event).
// Probes that need a namespace run in a forked child, so the caller stays untouched.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oishell {

struct CgroupV1Controller {
  std::string controller;  // "memory", "pids"
  std::string dir;         // this process's cgroup in that hierarchy
  bool writable = false;   // we may create a child group there
};

struct KernelFacts {
  // User namespaces: whether an unprivileged-style sandbox can be built (unshare user+mount+net, id maps, mount).
  bool userns_works = false;
  std::string userns_detail;  // "ok" or the failing call with errno
  std::optional<int64_t> max_user_namespaces;                 // user.max_user_namespaces
  std::optional<int64_t> unprivileged_userns_clone;           // kernel.unprivileged_userns_clone (Debian patch)
  std::optional<int64_t> apparmor_restrict_unprivileged_userns;  // kernel.apparmor_restrict_unprivileged_userns
  // Landlock.
  int landlock_abi = 0;
  std::vector<std::string> landlock_rights;  // names of what the ABI brings ("fs.refer", "net.connect_tcp", ...)
  // seccomp.
  bool seccomp_filter = false;
  bool seccomp_notify = false;  // user notification (kernel 5.0+ and libseccomp API level 5+)
  unsigned libseccomp_api = 0;
  // cgroups.
  std::string cgroup_v2_dir;  // our cgroup in the unified hierarchy; empty without one
  std::vector<std::string> cgroup_v2_controllers;
  bool cgroup_v2_writable = false;
  // Where a sandbox's memory and pids group would be made in the unified hierarchy (a directory delegated to this
  // process, cgroup::find_v2_parent); empty when nowhere, and then cgroup_v2_delegation says why, candidate by
  // candidate. Else cgroup_v2_delegation says whether the controllers would be enabled there first.
  std::string cgroup_v2_parent;
  std::string cgroup_v2_delegation;
  std::vector<CgroupV1Controller> cgroup_v1;  // memory, pids (where mounted)
  // A cgroup hierarchy mounted with favordynmods (cgroup::cgroup_mounts): moving init into its cgroups does not wait
  // for an RCU grace period. And a mount point to remount with it.
  bool cgroup_favordynmods = false;
  std::string cgroup_mount_point;
  // Terminal.
  std::optional<int64_t> legacy_tiocsti;  // dev.tty.legacy_tiocsti (1: TIOCSTI allowed on one's own tty)
  // Transparent capture, inside a new user + network namespace.
  bool tun_in_userns = false;
  std::string tun_detail;
  bool nftables_in_userns = false;
  std::string nftables_detail;
};

// Probed on the first call (forks a child for the namespace probes; call it while single-threaded).
const KernelFacts& kernel_facts();

// Reads an integer sysctl ("kernel/unprivileged_userns_clone" under /proc/sys); nullopt when absent.
std::optional<int64_t> read_sysctl(const std::string& name);

}  // namespace oishell
