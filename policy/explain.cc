// explain(): the compiled policy as sentences a reviewer reads in a minute. See explain.h.
#include "policy/explain.h"

#include <algorithm>

#include "policy/compiler.h"
#include "policy/mount_plan.h"
#include "policy/spec_json.h"
#include "policy/units.h"

namespace oishell::policy {
namespace {

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string describe_rule(const HostRule& rule) {
  std::string what;
  switch (rule.kind) {
    case HostRule::Kind::exact:
      what = rule.host;
      break;
    case HostRule::Kind::suffix:
      what = "any subdomain of " + rule.host + " (not " + rule.host + " itself)";
      break;
    case HostRule::Kind::ip_cidr:
      what = rule.cidr ? rule.cidr->to_string() : rule.text;
      break;
  }
  if (rule.ports.empty()) return what + " on any port";
  std::vector<std::string> ports;
  for (auto p : rule.ports) ports.push_back(std::to_string(p));
  return what + " on port" + (ports.size() > 1 ? "s " : " ") + join(ports);
}

void files(const Policy& policy, const SandboxSpec& spec, std::string& out) {
  out += "Files\n";
  out += "  The workspace " + spec.workspace + " is " +
         (spec.workspace_read_only ? "readable but not writable" : "readable and writable") +
         "; commands start there.\n";
  std::vector<std::string> system, links, extra_ro, extra_rw, hidden;
  for (const auto& m : spec.mounts) {
    bool is_system = std::find(system_dirs().begin(), system_dirs().end(), m.target) != system_dirs().end();
    switch (m.kind) {
      case MountStep::Kind::bind_ro:
        if (m.target == spec.workspace) break;
        (is_system ? system : extra_ro).push_back(m.target);
        break;
      case MountStep::Kind::bind_rw:
        if (m.target != spec.workspace) extra_rw.push_back(m.target);
        break;
      case MountStep::Kind::symlink:
        links.push_back(m.target + " -> " + m.source);
        break;
      case MountStep::Kind::hide:
        hidden.push_back(m.target);
        break;
      case MountStep::Kind::tmpfs:
      case MountStep::Kind::proc:
      case MountStep::Kind::dev:
      case MountStep::Kind::protect:
      case MountStep::Kind::file:  // /etc/resolv.conf: said under Network
        break;
    }
  }
  if (!system.empty()) {
    out += "  The system directories " + join(system) + " are readable and executable, not writable";
    out += links.empty() ? ".\n" : " (" + join(links) + " are the same links as on the host).\n";
  }
  if (!extra_ro.empty()) out += "  Also readable, not writable: " + join(extra_ro) + ".\n";
  if (!extra_rw.empty()) out += "  Also readable and writable (changes reach the host): " + join(extra_rw) + ".\n";
  // Where a root caller keeps root-only files closed besides the system directories: the read-only binds that are
  // not id-mapped (policy/mount_plan.h), so that a policy listing /etc, or root's own 0600 files, is not a surprise.
  if (std::string unmapped = describe_unmapped_read_only(spec); !unmapped.empty()) out += "  " + unmapped + "\n";
  bool tmp_is_tmpfs = std::any_of(spec.mounts.begin(), spec.mounts.end(), [](const MountStep& m) {
    return m.kind == MountStep::Kind::tmpfs && m.target == "/tmp";
  });
  if (tmp_is_tmpfs) out += "  /tmp is empty, private and writable; it is thrown away when the session ends.\n";
  switch (spec.home) {
    case HomeMode::tmpfs:
      if (spec.home_exposed.empty()) {
        out += "  The home directory " + spec.home_path +
               " is empty, private and writable; nothing of the real home is visible there.\n";
      }
      break;
    case HomeMode::workspace:
      out += "  The home directory is the workspace ($HOME=" + spec.home_path + ").\n";
      break;
    case HomeMode::none:
      out += "  There is no home directory ($HOME=" + spec.home_path + " does not exist inside).\n";
      break;
  }
  if (!spec.home_exposed.empty()) {
    out += "  The real home directory " + spec.home_exposed +
           " is visible because a writable path contains it (allow_home_workspace): its dotfiles and dot-directories "
           "(shell start-up files, ~/.local/bin, ~/.config, the Python user site, ~/.gitconfig, ...) and ~/bin are "
           "read-only, nothing can be created at its top level, and its other entries are writable.\n";
  }
  out += "  /proc shows only the sandbox's own processes; /dev has only null, zero, full, random, urandom, tty and a "
         "private pty.\n";
  if (!hidden.empty()) out += "  Hidden, although a parent is visible: " + join(hidden) + ".\n";
  std::vector<std::string> listed;
  for (const auto& h : policy.filesystem.hide) listed.push_back(h.text);
  if (!listed.empty()) {
    out += "  Always hidden wherever they would be visible (" + std::to_string(listed.size()) +
           " entries): " + join(listed) + ".\n";
  }
  if (!spec.workspace_read_only) {
    out += spec.git == GitMode::read_only
               ? "  Git: the workspace's repository metadata (.git) is read-only: git status, diff and log work, "
                 "commits do not (filesystem.git: commit allows them).\n"
               : "  Git: commits work (objects, refs, logs, index and HEAD are writable); what git executes or obeys "
                 "(config, config.worktree, hooks, info, commondir, worktrees, modules, branches, remotes) is "
                 "read-only where it exists.\n";
    out += "  Git repositories created or changed during the run anywhere in the writable paths are neutralised "
           "when each command ends, before the host's git can read them: configuration git would execute is "
           "removed, new hooks and redirections (commondir, .git files) are moved aside, and the user is told.\n";
  }
  std::vector<std::string> read_only_protected;
  for (const auto& step : spec.mounts) {
    if (step.kind == MountStep::Kind::protect && step.target != spec.home_exposed) {
      read_only_protected.push_back(step.target);
    }
  }
  if (!read_only_protected.empty()) {
    out += "  Read-only inside the workspace, because tools on the host run them later: " +
           join(read_only_protected) + ".\n";
  }
  std::vector<std::string> protect_listed;
  for (const auto& p : policy.filesystem.protect) protect_listed.push_back(p.text);
  if (!protect_listed.empty()) {
    out += "  Protected when present (checked when the sandbox starts): " + join(protect_listed) +
           ". Any of them created, changed or removed during the run is reported at exit.\n";
  }
  out += "  Nothing else of the host filesystem exists inside.\n";
}

// What `inspect` means for a group of allow rules, said once after the group.
constexpr char kInspectedNames[] =
    "the first bytes of each connection must be a TLS ClientHello naming the host (SNI) or an HTTP/1.x request "
    "whose Host header names it; anything else (another protocol, TLS without a server name) is closed before a "
    "byte is forwarded";
constexpr char kInspectedAddresses[] =
    "an IP destination has no name to compare: TLS passes only without a server name, HTTP only with the address "
    "as its Host; anything else is closed before a byte is forwarded";
constexpr char kUninspected[] =
    "any protocol passes (ssh, databases, ...), and a program that ignores the proxy gets a socket connected by the "
    "supervisor, kernel to kernel, without a copy; nothing checks which name the bytes ask the server for, so a "
    "server shared by many sites (a CDN) may serve any of them";

constexpr char kDatagrams[] =
    "datagrams go through the supervisor's datagram relay, copied one by one to the checked address (after "
    "resolution, pinned hosts and the private-address guard, as for TCP), and replies come back the same way; only "
    "a connected socket gets out (connect(2), then send): sendto(2) with an address outside is unreachable";

// A terminating rule (issue 16), in one sentence: what the relay reads, what it lets through, what it adds.
std::string describe_terminated(const HostRule& r) {
  std::string text = describe_rule(r) + ": TLS ended by the relay, which the sandbox trusts through a certificate "
                     "authority of its own (made at start, its key never inside, only for the names such rules "
                     "terminate), and which checks the host's own certificate against " +
                     (r.upstream_ca.empty() ? std::string("this machine's trust store") : r.upstream_ca + " only");
  text += r.methods.empty() ? "; every method" : "; only " + join(r.methods);
  text += r.paths.empty() ? ", to every path" : ", to paths " + join(r.paths);
  text += " (each request on a connection checked; any other gets 403 and an event)";
  for (const auto& c : r.credentials) {
    text += "; requests it allows carry the credential `" + c.name + "` in " + c.header +
            (c.scheme.empty() ? "" : " as `" + c.scheme + " ...`") + ", its secret from " +
            (c.from_env.empty() ? "the file " + c.from_file : "oishell's variable " + c.from_env) +
            " outside; inside, " + c.env + " holds only a placeholder, refused anywhere else";
  }
  return text;
}

void allow_rules(const NetworkSpec& net, std::string& out) {
  std::vector<std::string> names, addresses, uninspected, datagrams, terminated;
  for (const auto& r : net.allow) {
    if (r.tls == HostRule::Tls::terminate) {
      terminated.push_back(describe_terminated(r));
    } else if (r.protocol == HostRule::Protocol::udp) {
      datagrams.push_back(describe_rule(r));
    } else if (!r.inspect) {
      uninspected.push_back(describe_rule(r));
    } else if (!net.allow_all) {
      (r.kind == HostRule::Kind::ip_cidr ? addresses : names).push_back(describe_rule(r));
    }
  }
  if (net.allow_all) {
    out += "  Every public destination is allowed, inspected: " + std::string(kInspectedNames) + ".\n";
  }
  if (!names.empty()) out += "  Allowed, inspected: " + join(names, "; ") + ". For these, " + kInspectedNames + ".\n";
  if (!addresses.empty()) {
    out += "  Allowed, inspected: " + join(addresses, "; ") + ". For these, " + kInspectedAddresses + ".\n";
  }
  for (const auto& t : terminated) out += "  HTTPS read request by request (tls: terminate): " + t + ".\n";
  if (!uninspected.empty()) {
    out += "  Allowed without inspection (inspect: false): " + join(uninspected, "; ") + ". For these, " +
           kUninspected + ".\n";
  }
  if (!datagrams.empty()) {
    out += "  UDP allowed (protocol: udp): " + join(datagrams, "; ") + ". For these, " + kDatagrams + ".\n";
  }
  out += std::string("  Other UDP is refused (unreachable, with an event), except DNS questions to the stub") +
         (net.allow_all ? "; allow_all does not cover UDP" : "") + ".\n";
}

void unix_sockets(const NetworkSpec& net, std::string& out) {
  for (const auto& path : net.unix_sockets) {
    out += "  May connect to the unix socket " + path +
           " (network.unix): what listens there acts outside the sandbox, with its own rights.\n";
  }
  out += "  Every other pathname unix socket outside the sandbox's own tmpfs (/tmp, a tmpfs home, /dev/shm) is "
         "refused, with an event" +
         std::string(net.mode == NetMode::none ? " (in mode none too)" : "") + ".\n";
}

void network(const SandboxSpec& spec, std::string& out) {
  const auto& net = spec.network;
  out += "Network\n";
  if (net.mode == NetMode::none) {
    out += "  No network: the sandbox has only its own loopback; no connection leaves it.\n";
    unix_sockets(net, out);
    return;
  }
  out += "  Connections leave only through oishell's proxy (HTTP on 127.0.0.1:" + std::to_string(net.http_proxy_port) +
         ", SOCKS5 on 127.0.0.1:" + std::to_string(net.socks_proxy_port) +
         "); the proxy variables point there and direct connections are refused.\n";
  out += "  Names are answered by oishell's DNS stub (127.0.0.1:" + std::to_string(net.dns_port) +
         ", /etc/resolv.conf): a name that may be used gets a stand-in address, never the real one; a denied name "
         "does not exist, and is never looked up.\n";
  if (!net.deny.empty()) {
    std::vector<std::string> d;
    for (const auto& r : net.deny) d.push_back(describe_rule(r));
    out += "  Always denied: " + join(d, "; ") + ".\n";
  }
  allow_rules(net, out);
  if (!net.allow_all) {
    out += net.on_unlisted == OnUnlisted::ask
               ? "  Any other destination is asked about (the agent asks the user) before it connects; an answered "
                 "one is inspected.\n"
               : "  Any other destination is denied.\n";
  }
  std::vector<std::string> priv;
  for (const auto& c : net.allow_private) priv.push_back(c.to_string());
  out += "  Loopback, private, link-local and multicast addresses, this machine's own addresses and cloud metadata "
         "endpoints (169.254.169.254, Azure's 168.63.129.16, ...) are refused" +
         (priv.empty() ? std::string(".\n") : ", except " + join(priv) + ".\n");
  for (const auto& [name, ip] : net.hosts) out += "  " + name + " resolves to " + ip + " (pinned).\n";
  unix_sockets(net, out);
}

void processes(const SandboxSpec& spec, std::string& out) {
  out += "Processes\n";
  out += "  Every process runs without privileges (no capabilities, no_new_privs) in its own process, user, mount, "
         "network, IPC and UTS namespaces.\n";
  out += spec.landlock.required
             ? "  Every guarantee below must be held by at least one layer (landlock: required): the sandbox does not "
               "start where one would be held by none. Landlock is used at the highest ABI the kernel offers.\n"
             : "  Landlock and the other layers are used as far as the kernel supports them (landlock: best_effort); "
               "a guarantee no layer holds is reported as lost.\n";
  out += "  System calls denied (seccomp, " + std::string(to_string(spec.seccomp.level)) +
         " level): " + join(spec.seccomp.deny_sets) + ".\n";
  if (!spec.seccomp.allow_syscalls.empty()) {
    out += "  Taken out of those sets: " + join(spec.seccomp.allow_syscalls) + ".\n";
  }
  out += spec.seccomp.nested_namespaces ? "  Nested namespaces (containers inside) are allowed.\n"
                                        : "  Creating namespaces (containers inside) is not allowed.\n";
  const bool shared_proc = std::any_of(spec.mounts.begin(), spec.mounts.end(), [](const MountStep& m) {
    return m.kind == MountStep::Kind::proc && !m.source.empty();
  });
  out += shared_proc
             ? "  /proc shows the sandbox's own processes; where a container masks its /proc (the kernel then refuses "
               "a new one), it is the container's, read-only, and the container's other processes are listed "
               "(own_proc: best_effort; reported as degraded when it happens).\n"
             : "  /proc shows only the sandbox's own processes (own_proc: required): where a container masks its "
               "/proc, the sandbox does not start.\n";
}

void limits(const SandboxSpec& spec, std::string& out) {
  const auto& l = spec.limits;
  out += "Limits\n";
  std::vector<std::string> set, unset;
  auto add = [&](const std::optional<uint64_t>& v, const std::string& name, const std::string& text) {
    if (v) {
      set.push_back(text);
    } else {
      unset.push_back(name);
    }
  };
  add(l.memory_bytes, "memory", l.memory_bytes ? "memory " + format_size(*l.memory_bytes) : "");
  add(l.pids, "processes", l.pids ? "at most " + std::to_string(*l.pids) + " processes" : "");
  add(l.cpu_time_seconds, "CPU time",
      l.cpu_time_seconds ? "CPU time " + format_duration_ms(*l.cpu_time_seconds * 1000) : "");
  add(l.wall_time_ms, "wall time", l.wall_time_ms ? "wall time " + format_duration_ms(*l.wall_time_ms) : "");
  add(l.file_size_bytes, "file size", l.file_size_bytes ? "files up to " + format_size(*l.file_size_bytes) : "");
  add(l.open_files, "open files", l.open_files ? "at most " + std::to_string(*l.open_files) + " open files" : "");
  if (!set.empty()) out += "  " + join(set) + ".\n";
  if (!unset.empty()) out += "  No limit on " + join(unset) + ".\n";
}

void environment(const SandboxSpec& spec, std::string& out) {
  out += "Environment\n";
  std::vector<std::string> names;
  for (const auto& [name, value] : spec.env) names.push_back(name);
  out += "  Exactly these variables: " + join(names) + "; nothing else of the host environment enters.\n";
}

// Each guarantee, and the layers that hold it on this machine (policy/guarantees.h).
void guarantees(const SandboxSpec& spec, const LayerFacts& layers, std::string& out) {
  out += "Guarantees here, with Landlock " + describe_landlock(layers) + "\n";
  for (const auto& g : assess_guarantees(spec, layers)) {
    std::string lost;
    if (!g.waived_by.empty()) {
      lost = " LOST: " + join(g.waived_by, "; ") + ".";
    } else if (!g.held()) {
      lost = " LOST: no layer holds it here.";
    }
    out += "  " + g.statement + lost + "\n";
    std::vector<std::string> by;
    for (const auto& l : g.held_by) by.push_back(l.name + " (" + l.how + ")");
    if (!by.empty()) out += "    Held by " + join(by, "; ") + ".\n";
    for (const auto& m : g.missing) out += "    Not by " + m.name + ": needs " + m.needs + ".\n";
  }
}

}  // namespace

std::string explain(const Policy& policy, const SandboxSpec& spec, const LayerFacts* layers) {
  std::string out;
  std::vector<std::string> chain(policy.chain.rbegin(), policy.chain.rend());
  out += "Policy: " + join(chain, " extends ") + "\n";
  if (!policy.description.empty()) out += "  " + policy.description + "\n";
  out += "\n";
  files(policy, spec, out);
  out += "\n";
  network(spec, out);
  out += "\n";
  processes(spec, out);
  out += "\n";
  limits(spec, out);
  out += "\n";
  environment(spec, out);
  if (layers) {
    out += "\n";
    guarantees(spec, *layers, out);
  }
  return out;
}

}  // namespace oishell::policy
