// diff_specs(): what one compiled policy allows that the other does not. See explain.h.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <set>

#include "policy/explain.h"
#include "policy/paths.h"
#include "policy/units.h"

namespace oishell::policy {
namespace {

// What the sandbox may do at a path: 0 nothing (absent or hidden), 1 read, 2 read and write.
std::map<std::string, int> path_access(const SandboxSpec& spec) {
  std::map<std::string, int> out;
  for (const auto& m : spec.mounts) {
    switch (m.kind) {
      case MountStep::Kind::bind_ro:
      case MountStep::Kind::protect:
        out[m.target] = 1;
        break;
      case MountStep::Kind::bind_rw:
        out[m.target] = 2;
        break;
      case MountStep::Kind::hide:
      case MountStep::Kind::tmpfs:
      case MountStep::Kind::proc:
      case MountStep::Kind::dev:
      case MountStep::Kind::file:
        out[m.target] = 0;  // no host data there (private to the sandbox, or hidden)
        break;
      case MountStep::Kind::symlink:
        break;
    }
  }
  return out;
}

// The access at `path` in `spec`: the deepest entry at or above it.
int access_at(const std::map<std::string, int>& access, const std::string& path) {
  int level = 0;
  size_t best = 0;
  bool found = false;
  for (const auto& [p, l] : access) {
    if (path_within(path, p) && (!found || p.size() >= best)) {
      level = l;
      best = p.size();
      found = true;
    }
  }
  return level;
}

const char* kAccessWords[] = {"no access", "read", "read and write"};

void compare_files(const SandboxSpec& a, const SandboxSpec& b, SpecDiff& out) {
  auto aa = path_access(a), ba = path_access(b);
  std::set<std::string> paths;
  for (const auto& [p, l] : aa) paths.insert(p);
  for (const auto& [p, l] : ba) paths.insert(p);
  for (const auto& p : paths) {
    int la = access_at(aa, p), lb = access_at(ba, p);
    if (la == lb) continue;
    std::string line = std::string("files: ") + kAccessWords[std::max(la, lb)] + " " + p + " (the other: " +
                       kAccessWords[std::min(la, lb)] + ")";
    (lb > la ? out.only_b : out.only_a).push_back(line);
  }
}

std::set<std::string> rule_texts(const std::vector<HostRule>& rules) {
  std::set<std::string> out;
  for (const auto& r : rules) out.insert(r.text);
  return out;
}

// What the allow rules of one text grant together. A udp rule is its own grant, keyed "udp <text>" (never
// inspected: datagrams are relayed as they are, so it reads as inspected here and no "without inspection" line is
// made for it). Several rules of one text grant their union: one uninspected or passthrough rule opens the host.
struct Grant {
  bool inspected = true;
  bool terminated = true;  // every rule of the text terminates TLS (issue 16): requests are checked
  bool every_method = false, every_path = false;
  std::set<std::string> methods, paths, credentials;
};

std::map<std::string, Grant> allow_rules(const std::vector<HostRule>& rules) {
  std::map<std::string, Grant> out;
  for (const auto& r : rules) {
    if (r.protocol == HostRule::Protocol::udp) {
      out.emplace("udp " + r.text, Grant{true, false});
      continue;
    }
    Grant& g = out[r.text];
    g.inspected = g.inspected && r.inspect;
    g.terminated = g.terminated && r.tls == HostRule::Tls::terminate;
    g.every_method = g.every_method || r.methods.empty();
    g.every_path = g.every_path || r.paths.empty();
    g.methods.insert(r.methods.begin(), r.methods.end());
    g.paths.insert(r.paths.begin(), r.paths.end());
    for (const auto& c : r.credentials) g.credentials.insert(c.name);
  }
  return out;
}

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// What a terminating grant lets through, for a line about a rule only one side has.
std::string request_rules(const Grant& g) {
  if (!g.terminated) return "";
  std::string out = " (TLS terminated: " + (g.every_method ? std::string("every method") : joined(g.methods)) +
                    ", " + (g.every_path ? std::string("every path") : "paths " + joined(g.paths));
  if (!g.credentials.empty()) out += ", credentials " + joined(g.credentials);
  return out + ")";
}

// Lines for what `more` allows that `less` does not: rules it alone has; rules both have that only `less`
// inspects, or only `less` reads request by request; and, both terminated, the methods, paths (as written) and
// credentials only `more` has.
void compare_allow(const std::map<std::string, Grant>& more, const std::map<std::string, Grant>& less,
                   std::vector<std::string>& out) {
  for (const auto& [text, g] : more) {
    auto other = less.find(text);
    if (other == less.end()) {
      out.push_back("network: allow " + text + (g.inspected ? "" : " without inspection") + request_rules(g));
      continue;
    }
    const Grant& o = other->second;
    if (!g.inspected && o.inspected) {
      out.push_back("network: allow " + text + " without inspection (the other inspects it)");
    }
    if (!g.terminated && o.terminated) {
      out.push_back("network: allow " + text + " without reading its requests (the other terminates TLS and "
                    "checks each request)");
      continue;
    }
    if (!g.terminated) continue;
    std::set<std::string> methods, paths, credentials;
    if (!o.every_method) {
      if (g.every_method) {
        out.push_back("network: " + text + ": every method (the other: " + joined(o.methods) + ")");
      } else {
        std::set_difference(g.methods.begin(), g.methods.end(), o.methods.begin(), o.methods.end(),
                            std::inserter(methods, methods.end()));
      }
    }
    if (!o.every_path) {
      if (g.every_path) {
        out.push_back("network: " + text + ": every path (the other: " + joined(o.paths) + ")");
      } else {
        std::set_difference(g.paths.begin(), g.paths.end(), o.paths.begin(), o.paths.end(),
                            std::inserter(paths, paths.end()));
      }
    }
    std::set_difference(g.credentials.begin(), g.credentials.end(), o.credentials.begin(), o.credentials.end(),
                        std::inserter(credentials, credentials.end()));
    if (!methods.empty()) out.push_back("network: " + text + ": methods " + joined(methods));
    if (!paths.empty()) out.push_back("network: " + text + ": paths " + joined(paths));
    if (!credentials.empty()) out.push_back("network: " + text + ": credentials " + joined(credentials));
  }
}

// Unix sockets apply in both network modes.
void compare_unix(const NetworkSpec& na, const NetworkSpec& nb, SpecDiff& out) {
  std::set<std::string> ua(na.unix_sockets.begin(), na.unix_sockets.end());
  std::set<std::string> ub(nb.unix_sockets.begin(), nb.unix_sockets.end());
  for (const auto& p : ub) {
    if (!ua.count(p)) out.only_b.push_back("network: connect to the unix socket " + p);
  }
  for (const auto& p : ua) {
    if (!ub.count(p)) out.only_a.push_back("network: connect to the unix socket " + p);
  }
}

// Pinned resolution (`hosts:`): a pin only one side has, or one pointing elsewhere.
void compare_pins(const NetworkSpec& na, const NetworkSpec& nb, SpecDiff& out) {
  auto one_way = [](const NetworkSpec& mine, const NetworkSpec& theirs, std::vector<std::string>& lines) {
    for (const auto& [name, ip] : mine.hosts) {
      auto other = theirs.hosts.find(name);
      if (other != theirs.hosts.end() && other->second == ip) continue;
      lines.push_back("network: " + name + " resolves to " + ip +
                      (other == theirs.hosts.end() ? std::string(" (pinned)") : " (the other: " + other->second + ")"));
    }
  };
  one_way(nb, na, out.only_b);
  one_way(na, nb, out.only_a);
}

void compare_network(const NetworkSpec& na, const NetworkSpec& nb, SpecDiff& out) {
  compare_unix(na, nb, out);
  bool a_net = na.mode == NetMode::proxy, b_net = nb.mode == NetMode::proxy;
  if (a_net != b_net) {
    (b_net ? out.only_b : out.only_a).push_back("network: connections through the proxy (the other: no network)");
    return;
  }
  if (!a_net) return;
  if (na.allow_all != nb.allow_all) {
    (nb.allow_all ? out.only_b : out.only_a).push_back("network: every public destination (allow_all)");
  }
  auto allow_a = allow_rules(na.allow), allow_b = allow_rules(nb.allow);
  compare_allow(allow_b, allow_a, out.only_b);
  compare_allow(allow_a, allow_b, out.only_a);
  // A deny rule only in A is something B allows (or asks about), and the reverse.
  auto deny_a = rule_texts(na.deny), deny_b = rule_texts(nb.deny);
  for (const auto& t : deny_a) {
    if (!deny_b.count(t)) out.only_b.push_back("network: " + t + " is not denied (the other denies it)");
  }
  for (const auto& t : deny_b) {
    if (!deny_a.count(t)) out.only_a.push_back("network: " + t + " is not denied (the other denies it)");
  }
  if (na.on_unlisted != nb.on_unlisted) {
    (nb.on_unlisted == OnUnlisted::ask ? out.only_b : out.only_a)
        .push_back("network: unlisted destinations are asked about (the other denies them)");
  }
  std::set<std::string> pa, pb;
  for (const auto& c : na.allow_private) pa.insert(c.to_string());
  for (const auto& c : nb.allow_private) pb.insert(c.to_string());
  for (const auto& c : pb) {
    if (!pa.count(c)) out.only_b.push_back("network: private addresses in " + c);
  }
  for (const auto& c : pa) {
    if (!pb.count(c)) out.only_a.push_back("network: private addresses in " + c);
  }
  compare_pins(na, nb, out);
}

void compare_process(const SandboxSpec& a, const SandboxSpec& b, SpecDiff& out) {
  std::set<std::string> da(a.seccomp.deny_sets.begin(), a.seccomp.deny_sets.end());
  std::set<std::string> db(b.seccomp.deny_sets.begin(), b.seccomp.deny_sets.end());
  for (const auto& s : da) {
    if (!db.count(s)) out.only_b.push_back("processes: system calls of the `" + s + "` set (the other denies them)");
  }
  for (const auto& s : db) {
    if (!da.count(s)) out.only_a.push_back("processes: system calls of the `" + s + "` set (the other denies them)");
  }
  std::set<std::string> sa(a.seccomp.allow_syscalls.begin(), a.seccomp.allow_syscalls.end());
  std::set<std::string> sb(b.seccomp.allow_syscalls.begin(), b.seccomp.allow_syscalls.end());
  for (const auto& s : sb) {
    if (!sa.count(s)) out.only_b.push_back("processes: the system call " + s);
  }
  for (const auto& s : sa) {
    if (!sb.count(s)) out.only_a.push_back("processes: the system call " + s);
  }
  if (a.landlock.required != b.landlock.required) {
    (b.landlock.required ? out.only_a : out.only_b)
        .push_back("processes: starting without full Landlock support (best effort)");
  }
  auto shares_proc = [](const SandboxSpec& spec) {
    return std::any_of(spec.mounts.begin(), spec.mounts.end(),
                       [](const MountStep& m) { return m.kind == MountStep::Kind::proc && !m.source.empty(); });
  };
  if (shares_proc(a) != shares_proc(b)) {
    (shares_proc(b) ? out.only_b : out.only_a)
        .push_back("processes: the container's /proc, with its other processes, where it masks /proc (best effort)");
  }
}

void compare_limit(const char* name, const std::optional<uint64_t>& a, const std::optional<uint64_t>& b,
                   std::string (*format)(uint64_t), SpecDiff& out) {
  if (a == b) return;
  auto text = [&](const std::optional<uint64_t>& v) { return v ? format(*v) : std::string("no limit"); };
  // More is: no limit, or a larger number.
  bool b_more = !b || (a && *b > *a);
  (b_more ? out.only_b : out.only_a)
      .push_back(std::string("limits: ") + name + " " + text(b_more ? b : a) + " (the other: " + text(b_more ? a : b) +
                 ")");
}

std::string plain_number(uint64_t v) { return std::to_string(v); }
std::string seconds(uint64_t v) { return format_duration_ms(v * 1000); }

void compare_env(const SandboxSpec& a, const SandboxSpec& b, SpecDiff& out) {
  std::map<std::string, std::string> ea(a.env.begin(), a.env.end()), eb(b.env.begin(), b.env.end());
  // HOME, PWD and the proxy variables follow other settings (already compared); only the policy's own count.
  auto own = [](const std::string& k) {
    std::string upper = k;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return upper != "HOME" && upper != "PWD" && !upper.ends_with("_PROXY");
  };
  for (const auto& [k, v] : eb) {
    if (!ea.count(k) && own(k)) out.only_b.push_back("environment: " + k);
  }
  for (const auto& [k, v] : ea) {
    if (!eb.count(k) && own(k)) out.only_a.push_back("environment: " + k);
  }
}

}  // namespace

SpecDiff diff_network(const NetworkSpec& a, const NetworkSpec& b) {
  SpecDiff out;
  compare_network(a, b, out);
  return out;
}

SpecDiff diff_specs(const SandboxSpec& a, const SandboxSpec& b) {
  SpecDiff out;
  compare_files(a, b, out);
  compare_network(a.network, b.network, out);
  compare_process(a, b, out);
  const auto &la = a.limits, &lb = b.limits;
  compare_limit("memory", la.memory_bytes, lb.memory_bytes, &format_size, out);
  compare_limit("processes", la.pids, lb.pids, &plain_number, out);
  compare_limit("CPU time", la.cpu_time_seconds, lb.cpu_time_seconds, &seconds, out);
  compare_limit("wall time", la.wall_time_ms, lb.wall_time_ms, &format_duration_ms, out);
  compare_limit("file size", la.file_size_bytes, lb.file_size_bytes, &format_size, out);
  compare_limit("open files", la.open_files, lb.open_files, &plain_number, out);
  compare_env(a, b, out);
  return out;
}

}  // namespace oishell::policy
