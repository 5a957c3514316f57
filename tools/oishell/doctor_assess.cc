#include "tools/oishell/doctor_assess.h"

#include <algorithm>

#include "policy/units.h"
#include "runtime/outside/host_advice.h"
#include "policy/seccomp_sets.h"

namespace oishell::cli {
namespace {

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string opt(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "absent"; }

// Landlock at the ABI in use (the kernel's, capped by OISHELL_LANDLOCK_ABI): what each part adds. A part the ABI
// lacks is one layer fewer for guarantees other layers still hold (the guarantees section says which).
void landlock(const LayerFacts& layers, const SandboxSpec& spec, std::vector<FeatureVerdict>& out) {
  const int abi = layers.landlock_abi;
  const std::string in_use = describe_landlock(layers);
  const std::string fewer = "; one layer fewer, the guarantees below say what still holds them";
  if (abi == 0) {
    out.push_back({"landlock.filesystem", Verdict::unavailable, "no Landlock: " + in_use + fewer});
  } else if (abi < 3) {
    out.push_back({"landlock.filesystem", Verdict::degraded, in_use + ": truncate and device ioctls not covered" + fewer});
  } else if (abi < 5) {
    out.push_back({"landlock.filesystem", Verdict::degraded, in_use + ": device ioctls not covered" + fewer});
  } else {
    out.push_back({"landlock.filesystem", Verdict::enforced,
                   in_use + ": read/write/exec/make/remove/refer/truncate/ioctl_dev by path"});
  }
  if (abi >= 4) {
    std::vector<std::string> ports;
    for (auto p : spec.landlock.tcp_connect_ports) ports.push_back(std::to_string(p));
    out.push_back({"landlock.tcp", Verdict::enforced,
                   "TCP connect only to port(s) " + (ports.empty() ? std::string("none") : join(ports)) +
                       ", bind " + (spec.landlock.tcp_bind_ports.empty() ? "nowhere" : "only to listed ports")});
  } else {
    out.push_back({"landlock.tcp", Verdict::unavailable, "needs ABI 4; TCP is confined by the network namespace" + fewer});
  }
  if (abi >= 6) {
    out.push_back({"landlock.scopes", Verdict::enforced,
                   "abstract unix sockets and signals confined to the sandbox's Landlock domain"});
  } else {
    out.push_back({"landlock.scopes", Verdict::unavailable,
                   "needs ABI 6; abstract sockets and signals are confined by the namespaces" + fewer});
  }
}

void limits(const SandboxSpec& spec, const std::vector<std::string>& mechanisms, std::vector<FeatureVerdict>& out) {
  for (const auto& m : mechanisms) {
    std::string what = m.substr(0, m.find(':'));
    bool weaker = (what == "memory" || what == "pids") && m.find("rlimit") != std::string::npos;
    std::string name = "limits." + what;
    for (auto& c : name) c = c == ' ' ? '_' : c;
    out.push_back({name, weaker ? Verdict::degraded : Verdict::enforced, m.substr(m.find(':') + 2), false});
  }
  if (spec.limits.wall_time_ms) {
    out.push_back({"limits.wall_time", Verdict::enforced,
                   "the supervisor kills the command after " + policy::format_duration_ms(*spec.limits.wall_time_ms),
                   false});
  }
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::enforced: return "enforced";
    case Verdict::degraded: return "degraded";
    case Verdict::unavailable: return "unavailable";
  }
  return "?";
}

std::vector<FeatureVerdict> assess(const KernelFacts& k, const LayerFacts& layers, const SandboxSpec& spec,
                                   const std::vector<std::string>& limit_mechanisms) {
  std::vector<FeatureVerdict> out;
  std::string userns_why = k.userns_detail;
  if (std::string advice = sandbox_blocked_advice(host_signals(), k.userns_detail); !advice.empty()) {
    userns_why += "; " + advice;
  }
  if (k.userns_works) {
    out.push_back({"namespaces", Verdict::enforced,
                   "user, mount, pid, net, ipc, uts and cgroup namespaces; a new root with only the policy's paths"});
  } else {
    out.push_back({"namespaces", Verdict::unavailable, "cannot create a user namespace: " + userns_why});
  }
  landlock(layers, spec, out);
  out.push_back({"capabilities", k.userns_works ? Verdict::enforced : Verdict::unavailable,
                 "every set cleared, securebits locked, no_new_privs"});
  if (k.seccomp_filter) {
    std::vector<std::string> sets(spec.seccomp.deny_sets.begin(), spec.seccomp.deny_sets.end());
    if (spec.seccomp.level == SeccompLevel::strict) sets.push_back("strict_extras");
    out.push_back({"seccomp", Verdict::enforced,
                   "x86_64 only (x32/i386 killed); deny sets: " + join(sets)});
  } else {
    out.push_back({"seccomp", Verdict::unavailable, "no seccomp filter support in this kernel"});
  }
  if (k.seccomp_notify) {
    out.push_back({"seccomp.reports", Verdict::enforced, "each denial reported as a \"denied\" event (user notification)"});
  } else {
    out.push_back({"seccomp.reports", Verdict::degraded,
                   "no seccomp user notification: denials return their errno but are not reported"});
  }
  out.push_back({"terminal_injection", k.seccomp_filter ? Verdict::enforced : Verdict::degraded,
                 "setsid (no host controlling terminal) and TIOCSTI/TIOCLINUX denied by seccomp; "
                 "dev.tty.legacy_tiocsti=" + opt(k.legacy_tiocsti)});
  if (spec.network.mode == NetMode::none) {
    out.push_back({"network", k.userns_works ? Verdict::enforced : Verdict::unavailable,
                   "an empty network namespace (loopback only)"});
  } else {
    out.push_back({"network", k.userns_works ? Verdict::enforced : Verdict::unavailable,
                   "a private network namespace; the only exit is oishell's proxy on 127.0.0.1:" +
                       std::to_string(spec.network.http_proxy_port) + " (HTTP) and :" +
                       std::to_string(spec.network.socks_proxy_port) + " (SOCKS5)"});
  }
  limits(spec, limit_mechanisms, out);
  return out;
}

bool enforced_in_full(const std::vector<FeatureVerdict>& verdicts) {
  for (const auto& v : verdicts) {
    if (v.security && v.verdict != Verdict::enforced) return false;
  }
  return true;
}

nlohmann::json kernel_facts_json(const KernelFacts& k) {
  auto optj = [](const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json v1 = nlohmann::json::array();
  for (const auto& c : k.cgroup_v1) v1.push_back({{"controller", c.controller}, {"dir", c.dir}, {"writable", c.writable}});
  return {{"user_namespaces",
           {{"works", k.userns_works},
            {"detail", k.userns_detail},
            {"user.max_user_namespaces", optj(k.max_user_namespaces)},
            {"kernel.unprivileged_userns_clone", optj(k.unprivileged_userns_clone)},
            {"kernel.apparmor_restrict_unprivileged_userns", optj(k.apparmor_restrict_unprivileged_userns)}}},
          {"landlock", {{"abi", k.landlock_abi}, {"rights", k.landlock_rights}}},
          {"seccomp",
           {{"filter", k.seccomp_filter}, {"user_notification", k.seccomp_notify}, {"libseccomp_api", k.libseccomp_api}}},
          {"cgroup_v2",
           {{"dir", k.cgroup_v2_dir}, {"controllers", k.cgroup_v2_controllers}, {"writable", k.cgroup_v2_writable}}},
          {"cgroup_v1", v1},
          {"cgroup_favordynmods", k.cgroup_favordynmods},
          {"dev.tty.legacy_tiocsti", optj(k.legacy_tiocsti)},
          {"tun_in_userns", {{"works", k.tun_in_userns}, {"detail", k.tun_detail}}},
          {"nftables_in_userns", {{"works", k.nftables_in_userns}, {"detail", k.nftables_detail}}}};
}

std::string startup_advice(const KernelFacts& k, const std::vector<std::string>& limit_mechanisms, bool init_born) {
  if (k.cgroup_favordynmods) return "";
  const bool cgroups = std::any_of(limit_mechanisms.begin(), limit_mechanisms.end(), [init_born](const std::string& m) {
    return m.find(": cgroup v1 ") != std::string::npos || (!init_born && m.find(": cgroup v2 ") != std::string::npos);
  });
  if (!cgroups) return "";
  return "each sandbox's init is moved into its cgroups, and no cgroup hierarchy here is mounted with favordynmods: "
         "the first move after an idle moment waits for an RCU grace period (about 10 ms on an idle machine, most of "
         "a start-up). As root, `mount -o remount,favordynmods " + k.cgroup_mount_point +
         "` (one hierarchy is enough; forks and exits cost a little more) removes the wait.";
}

}  // namespace oishell::cli
