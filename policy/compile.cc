// compile_policy(): load, override, compile. The network, process, limits and env halves of compile() live here;
// the filesystem half is mount_plan.cc.
#include <algorithm>
#include <map>

#include "policy/compiler.h"
#include "policy/host_fs.h"
#include "policy/load.h"
#include "policy/mount_plan.h"

namespace oishell::policy {
namespace {

Diagnostic plain(SourcePos pos, std::string key, std::string message, std::string hint = {}) {
  return Diagnostic{std::move(pos), std::move(key), std::move(message), std::move(hint)};
}

// $HOME inside: the host's home path when it is a plausible one, else a neutral path. Never `/` or a system dir.
std::string home_inside(const CompileContext& context, const HostFs& host) {
  std::string home = context.home;
  if (home.empty() || home[0] != '/' || home.find("/..") != std::string::npos) return kFallbackHome;
  home = normalise_path(home);
  if (auto real = host.real_path(home)) home = *real;
  if (home == "/") return kFallbackHome;
  for (const auto& dir : system_dirs()) {
    if (path_within(home, dir)) return kFallbackHome;
  }
  for (const char* dir : {"/proc", "/dev", "/sys", "/tmp"}) {
    if (path_within(home, dir)) return kFallbackHome;
  }
  return home;
}

void add_env(std::vector<std::pair<std::string, std::string>>& env, const std::string& name, std::string value) {
  auto it = std::find_if(env.begin(), env.end(), [&](const auto& e) { return e.first == name; });
  if (it != env.end()) {
    it->second = std::move(value);
  } else {
    env.emplace_back(name, std::move(value));
  }
}

void compile_env(const Policy& policy, const CompileContext& context, SandboxSpec& spec) {
  auto& env = spec.env;
  env.emplace_back("PATH", kDefaultPath);
  for (const auto& [name, pos] : policy.env.pass) {
    if (auto value = context.env(name)) add_env(env, name, std::move(*value));
  }
  for (const auto& [name, value] : policy.env.set) add_env(env, name, value);
  add_env(env, "HOME", spec.home_path);
  add_env(env, "PWD", spec.cwd);
  if (spec.network.mode == NetMode::proxy) {
    std::string http = "http://127.0.0.1:" + std::to_string(spec.network.http_proxy_port);
    std::string socks = "socks5h://127.0.0.1:" + std::to_string(spec.network.socks_proxy_port);
    for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) add_env(env, name, http);
    for (const char* name : {"ALL_PROXY", "all_proxy"}) add_env(env, name, socks);
    for (const char* name : {"NO_PROXY", "no_proxy"}) add_env(env, name, "localhost,127.0.0.1,::1");
  }
}

void compile_network(const Policy& policy, SandboxSpec& spec) {
  const auto& net = policy.network;
  auto& out = spec.network;
  out.mode = net.mode.get_or(NetMode::proxy);
  out.allow_all = net.allow_all.get_or(false);
  for (const auto& item : net.allow) out.allow.push_back(item.rule);
  for (const auto& item : net.deny) out.deny.push_back(item.rule);
  for (const auto& item : net.allow_private) out.allow_private.push_back(item.cidr);
  for (const auto& [name, ip] : net.hosts) out.hosts[name] = ip.first;
  out.on_unlisted = net.on_unlisted.get_or(OnUnlisted::deny);
  if (out.mode == NetMode::proxy) {
    // The relay's listeners, and the DNS stub's (DNS over TCP: answers too large for UDP, and clients that ask so).
    spec.landlock.tcp_connect_ports = {out.http_proxy_port, out.socks_proxy_port, out.dns_port};
    spec.mounts.push_back(resolv_conf_step(out));
  }
}

// The longest pathname a sockaddr_un carries (sun_path: 108 bytes with the terminating NUL).
constexpr size_t kMaxUnixSocketPath = 107;

// network.unix: each path expanded and normalised, symlinks resolved where it exists (else in its directory, where
// that exists). A missing path is accepted: a socket is often created after the policy is written (a service not
// started yet); an existing path that is not a socket is an error, as is a path no sockaddr_un can hold.
void compile_unix_sockets(const Policy& policy, const PathVars& vars, const HostFs& host, SandboxSpec& spec,
                          std::vector<Diagnostic>& errors) {
  auto& out = spec.network.unix_sockets;
  for (const auto& item : policy.network.unix_sockets) {
    auto expanded = expand_path(item.text, PathRole::absolute, vars);
    if (!expanded) {
      errors.push_back(plain(item.pos, "network.unix", expanded.status().message()));
      continue;
    }
    std::string path = *expanded;
    if (auto real = host.real_path(path)) {
      if (!host.is_socket(*real)) {
        HostFs::Kind kind = host.kind(*real);
        std::string what = kind == HostFs::Kind::directory ? "a directory"
                           : kind == HostFs::Kind::file    ? "a regular file"
                                                           : "something other than a socket (a fifo or a device)";
        std::string via = *real == *expanded ? "" : " (" + *real + ")";
        errors.push_back(plain(item.pos, "network.unix", *expanded + via + " is " + what + ", not a unix socket",
                               "name the socket file itself, like /run/user/1000/bus"));
        continue;
      }
      path = *real;
    } else if (size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0) {
      if (auto dir = host.real_path(path.substr(0, slash))) path = (*dir == "/" ? "" : *dir) + path.substr(slash);
    }
    if (path.size() > kMaxUnixSocketPath) {
      errors.push_back(plain(item.pos, "network.unix",
                             path + " is longer than " + std::to_string(kMaxUnixSocketPath) +
                                 " bytes, more than a unix socket address holds",
                             "give the socket a shorter path"));
      continue;
    }
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(std::move(path));
  }
}

// Whether the host file `real` can be read inside the sandbox: under a bind's source, and not hidden.
bool visible_inside(const SandboxSpec& spec, const std::string& real) {
  bool bound = false;
  for (const auto& step : spec.mounts) {
    if ((step.kind == MountStep::Kind::bind_ro || step.kind == MountStep::Kind::bind_rw) &&
        path_within(real, step.source)) {
      bound = true;
    }
  }
  if (!bound) return false;
  for (const auto& step : spec.mounts) {
    if (step.kind == MountStep::Kind::hide && path_within(real, step.target)) return false;
  }
  return true;
}

// Whether `wide` (an allow rule that does not terminate) matches some host and port that `terminated` matches: the
// relay then lets the connection pass untouched (the larger grant), and the terminated rule's methods, paths and
// credentials never apply (runtime/relay/connection_upstream.cc, terminating_rules()).
bool passthrough_overlaps(const HostRule& wide, const HostRule& terminated) {
  if (wide.protocol != HostRule::Protocol::tcp || wide.tls == HostRule::Tls::terminate) return false;
  const bool ports_meet = wide.ports.empty() || terminated.ports.empty() ||
                          std::any_of(wide.ports.begin(), wide.ports.end(), [&](uint16_t p) {
                            return std::find(terminated.ports.begin(), terminated.ports.end(), p) !=
                                   terminated.ports.end();
                          });
  if (!ports_meet) return false;
  switch (wide.kind) {
    case HostRule::Kind::ip_cidr: return false;  // a terminated rule is by name; an address never matches it
    case HostRule::Kind::exact: return terminated.kind == HostRule::Kind::exact && terminated.host == wide.host;
    case HostRule::Kind::suffix:
      // Below the wildcard: the terminated host itself, or (another wildcard) every name it covers.
      return (terminated.host.size() > wide.host.size() + 1 && terminated.host.ends_with(wide.host) &&
              terminated.host[terminated.host.size() - wide.host.size() - 1] == '.') ||
             (terminated.kind == HostRule::Kind::suffix && terminated.host == wide.host);
  }
  return false;
}

// A terminating rule with checks or credentials that a passthrough rule also matches would be silently cancelled.
void check_passthrough_overlaps(const Policy& policy, const SandboxSpec& spec, std::vector<Diagnostic>& errors) {
  for (size_t i = 0; i < spec.network.allow.size(); ++i) {
    const HostRule& terminated = spec.network.allow[i];
    if (terminated.tls != HostRule::Tls::terminate) continue;
    if (terminated.methods.empty() && terminated.paths.empty() && terminated.credentials.empty()) continue;
    for (const HostRule& wide : spec.network.allow) {
      if (!passthrough_overlaps(wide, terminated)) continue;
      errors.push_back(plain(policy.network.allow[i].pos, "network.allow",
                             "`" + terminated.text + "` terminates TLS for its methods, paths or credentials, but the "
                             "passthrough rule `" + wide.text + "` matches it too, and the larger grant wins: none "
                             "of them would apply",
                             "narrow `" + wide.text + "` so that it leaves " + terminated.text +
                                 " out, or give it `tls: terminate` too"));
      break;
    }
  }
}

// The credentials and upstream CAs of terminating rules (issue 16): files expanded and checked on the host; a
// secret's file must be one the sandbox cannot read; a credential's name is one credential (the same definition
// may serve several rules), and its variable is set by nothing else.
void compile_credentials(const Policy& policy, const PathVars& vars, const HostFs& host, SandboxSpec& spec,
                         std::vector<Diagnostic>& errors) {
  std::map<std::string, HttpCredential> by_name;
  std::map<std::string, std::string> variable_owner;  // env -> credential name
  for (const auto& [name, value] : policy.env.set) variable_owner[name] = "";
  for (const auto& [name, pos] : policy.env.pass) variable_owner[name] = "";
  for (size_t i = 0; i < policy.network.allow.size(); ++i) {
    const SourcePos& pos = policy.network.allow[i].pos;
    HostRule& rule = spec.network.allow[i];
    if (!rule.upstream_ca.empty()) {
      auto expanded = expand_path(rule.upstream_ca, PathRole::absolute, vars);
      if (!expanded) {
        errors.push_back(plain(pos, "network.allow", "upstream_ca: " + expanded.status().message()));
      } else if (host.kind(*expanded) != HostFs::Kind::file && host.kind(*expanded) != HostFs::Kind::symlink) {
        errors.push_back(plain(pos, "network.allow", "upstream_ca: " + *expanded + " is not a file",
                               "a PEM file of the certificates that sign the upstream's"));
      } else {
        rule.upstream_ca = *expanded;
      }
    }
    for (HttpCredential& c : rule.credentials) {
      if (!c.from_env.empty() && std::any_of(policy.env.pass.begin(), policy.env.pass.end(),
                                             [&](const auto& pass) { return pass.first == c.from_env; })) {
        errors.push_back(plain(pos, "network.allow",
                               "credential " + c.name + ": its secret's variable " + c.from_env +
                                   " is also passed into the sandbox (env.pass), where any code could read it",
                               "drop " + c.from_env + " from env.pass: the sandbox gets the placeholder in " + c.env));
        continue;
      }
      if (!c.from_file.empty()) {
        auto expanded = expand_path(c.from_file, PathRole::absolute, vars);
        auto real = expanded ? host.real_path(*expanded) : std::nullopt;
        if (!expanded) {
          errors.push_back(plain(pos, "network.allow", "credential " + c.name + ": " + expanded.status().message()));
          continue;
        }
        if (!real || host.kind(*real) != HostFs::Kind::file) {
          errors.push_back(plain(pos, "network.allow",
                                 "credential " + c.name + ": " + *expanded + " is not a file on this host",
                                 "from_file names the file that holds the secret"));
          continue;
        }
        if (visible_inside(spec, *real)) {
          errors.push_back(plain(pos, "network.allow",
                                 "credential " + c.name + ": its secret's file " + *real +
                                     " is visible inside the sandbox, where any code could read it",
                                 "keep the secret outside every path the sandbox sees, or hide it (filesystem.hide)"));
          continue;
        }
        c.from_file = *real;
      }
      auto [known, added] = by_name.emplace(c.name, c);
      if (!added && !(known->second == c)) {
        errors.push_back(plain(pos, "network.allow",
                               "credential " + c.name + " is defined twice, differently",
                               "one name is one secret: give the other a name of its own"));
        continue;
      }
      auto [owner, fresh] = variable_owner.emplace(c.env, c.name);
      if (!fresh && owner->second != c.name) {
        errors.push_back(plain(pos, "network.allow",
                               "credential " + c.name + ": the variable " + c.env + " is already set by " +
                                   (owner->second.empty() ? std::string("env.set or env.pass")
                                                          : "credential " + owner->second),
                               "the variable holds the credential's placeholder: it can hold nothing else"));
      }
    }
  }
}

void compile_process(const Policy& policy, SandboxSpec& spec) {
  spec.seccomp = seccomp_spec(policy.process.seccomp.get_or(SeccompLevel::default_level),
                              policy.process.nested_namespaces.get_or(false));
  for (const auto& [name, pos] : policy.process.allow_syscalls) spec.seccomp.allow_syscalls.push_back(name);
  // The host procfs a proc step binds where the kernel refuses a fresh one (policy/sandbox_spec.h).
  if (!policy.process.own_proc_required.get_or(true)) {
    for (auto& step : spec.mounts) {
      if (step.kind == MountStep::Kind::proc) step.source = "/proc";
    }
  }
}

void compile_limits(const Policy& policy, SandboxSpec& spec) {
  const auto& in = policy.limits;
  auto& out = spec.limits;
  out.memory_bytes = in.memory_bytes.value;
  out.pids = in.pids.value;
  out.cpu_time_seconds = in.cpu_time_seconds.value;
  out.wall_time_ms = in.wall_time_ms.value;
  out.file_size_bytes = in.file_size_bytes.value;
  out.open_files = in.open_files.value;
}

}  // namespace

const std::vector<std::string>& default_deny_sets() {
  static const std::vector<std::string> kSets = {
      "mount_and_pivot", "namespaces", "kernel_modules", "kexec",   "keyring",
      "bpf_and_perf",    "tracing",    "userfaultfd",    "io_uring", "handles",
      "terminal_injection", "sockets", "clock_and_admin", "setid_files", "personality"};
  return kSets;
}

SeccompSpec seccomp_spec(SeccompLevel level, bool nested_namespaces) {
  SeccompSpec out;
  out.level = level;
  out.nested_namespaces = nested_namespaces;
  for (const auto& name : default_deny_sets()) {
    if (name == "namespaces" && nested_namespaces) continue;
    out.deny_sets.push_back(name);
  }
  if (level == SeccompLevel::strict) out.deny_sets.push_back("strict_extras");
  return out;
}

Result<SandboxSpec> compile(const Policy& policy, const CompileContext& context) {
  const CachedHostFs host(context.fs ? *context.fs : HostFs::real());
  std::vector<Diagnostic> errors;
  SandboxSpec spec;
  spec.version = policy.version;

  // The host's real home, for the checks that keep it out of writable binds.
  std::string real_home;
  if (!context.home.empty() && context.home[0] == '/' && context.home.find("/..") == std::string::npos) {
    if (auto real = host.real_path(normalise_path(context.home)); real && host.kind(*real) == HostFs::Kind::directory) {
      real_home = *real;
    }
  }
  const bool allow_home = policy.filesystem.allow_home_workspace.get_or(false);

  // The workspace: expanded, then resolved; it must be an existing directory and not a piece of the system.
  PathVars vars{context.cwd, "", context.home, context.tmpdir};
  const auto& ws_field = policy.filesystem.workspace;
  std::string ws_text = ws_field.get_or(".");
  auto expanded = expand_path(ws_text, PathRole::workspace, vars);
  if (!expanded) {
    errors.push_back(plain(ws_field.pos, "filesystem.workspace", expanded.status().message()));
  } else {
    auto real = host.real_path(*expanded);
    if (!real || host.kind(*real) != HostFs::Kind::directory) {
      errors.push_back(plain(ws_field.pos, "filesystem.workspace",
                             "workspace " + *expanded + " is not an existing directory", "create it, or run elsewhere"));
    } else {
      // A read-only workspace exposes nothing to writes, but `/` and the kernel's trees stay refused either way.
      bool read_only = policy.filesystem.workspace_read_only.get_or(false);
      std::string why = context.unconfined ? "" : writable_refusal(*real, real_home, allow_home);
      bool kernel_tree = *real == "/" || path_within(*real, "/proc") || path_within(*real, "/dev") ||
                         path_within(*real, "/sys");
      if (!why.empty() && (!read_only || kernel_tree)) {
        bool home = !allow_home && !real_home.empty() && *real != "/" && path_within(real_home, *real);
        errors.push_back(plain(ws_field.pos, "filesystem.workspace",
                               "workspace " + *real + " refused: " + why,
                               home ? "cd into a project directory or pass --workspace DIR; or, knowing its "
                                      "dotfiles and ~/bin stay read-only and the rest becomes writable, "
                                      "--allow-home-workspace (filesystem.allow_home_workspace: true)"
                                    : "cd into a project directory or pass --workspace DIR"));
      }
      vars.workspace = *real;
    }
  }
  if (!errors.empty()) return Status::error(format_diagnostics(errors));

  spec.workspace = vars.workspace;
  spec.workspace_read_only = policy.filesystem.workspace_read_only.get_or(false);
  spec.cwd = spec.workspace;
  spec.home = policy.filesystem.home.get_or(HomeMode::tmpfs);
  spec.home_path = spec.home == HomeMode::workspace ? spec.workspace : home_inside(context, host);
  spec.landlock.required = policy.landlock_required.get_or(true);

  FsPlanInput fs_in;
  fs_in.fs = &policy.filesystem;
  fs_in.host = &host;
  fs_in.vars = vars;
  fs_in.home_path = spec.home_path;
  fs_in.home = spec.home;
  fs_in.workspace_read_only = spec.workspace_read_only;
  fs_in.real_home = real_home;
  fs_in.allow_home = allow_home;
  fs_in.git = policy.filesystem.git.get_or(GitMode::read_only);
  spec.git = fs_in.git;
  if (!plan_filesystem(fs_in, spec, errors)) return Status::error(format_diagnostics(errors));

  compile_network(policy, spec);
  compile_unix_sockets(policy, vars, host, spec, errors);
  compile_credentials(policy, vars, host, spec, errors);
  check_passthrough_overlaps(policy, spec, errors);
  if (!errors.empty()) return Status::error(format_diagnostics(errors));
  compile_process(policy, spec);
  compile_limits(policy, spec);
  compile_env(policy, context, spec);
  return spec;
}

}  // namespace oishell::policy

namespace oishell {

Result<SandboxSpec> compile_policy(const PolicySource& source, const PolicyOverrides& overrides,
                                   const CompileContext& context) {
  policy::LoadResult loaded = policy::load_policy(source);
  if (!loaded.ok()) return Status::error(policy::format_diagnostics(loaded.errors));
  std::vector<policy::Diagnostic> errors;
  policy::apply_overrides(loaded.policy, overrides, context, errors);
  if (!errors.empty()) return Status::error(policy::format_diagnostics(errors));
  return policy::compile(loaded.policy, context);
}

}  // namespace oishell
