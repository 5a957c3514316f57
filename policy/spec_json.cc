// SandboxSpec <-> JSON: see spec_json.h.
#include "policy/spec_json.h"

#include <array>
#include <utility>

namespace oishell {
namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

template <typename E, size_t N>
using Names = std::array<std::pair<E, const char*>, N>;

constexpr Names<MountStep::Kind, 9> kMountKinds{{{MountStep::Kind::bind_ro, "bind_ro"},
                                                 {MountStep::Kind::bind_rw, "bind_rw"},
                                                 {MountStep::Kind::tmpfs, "tmpfs"},
                                                 {MountStep::Kind::proc, "proc"},
                                                 {MountStep::Kind::dev, "dev"},
                                                 {MountStep::Kind::hide, "hide"},
                                                 {MountStep::Kind::protect, "protect"},
                                                 {MountStep::Kind::symlink, "symlink"},
                                                 {MountStep::Kind::file, "file"}}};
constexpr Names<FsAccess, 4> kFsAccess{{{FsAccess::read, "read"},
                                        {FsAccess::read_exec, "read_exec"},
                                        {FsAccess::write, "write"},
                                        {FsAccess::dev, "dev"}}};
constexpr Names<HomeMode, 3> kHomeModes{
    {{HomeMode::tmpfs, "tmpfs"}, {HomeMode::workspace, "workspace"}, {HomeMode::none, "none"}}};
constexpr Names<GitMode, 2> kGitModes{{{GitMode::read_only, "read_only"}, {GitMode::commit, "commit"}}};
constexpr Names<NetMode, 2> kNetModes{{{NetMode::none, "none"}, {NetMode::proxy, "proxy"}}};
constexpr Names<OnUnlisted, 2> kOnUnlisted{{{OnUnlisted::deny, "deny"}, {OnUnlisted::ask, "ask"}}};
constexpr Names<SeccompLevel, 2> kSeccompLevels{
    {{SeccompLevel::default_level, "default"}, {SeccompLevel::strict, "strict"}}};

template <typename E, size_t N>
const char* name_of(const Names<E, N>& names, E value) {
  for (const auto& [v, n] : names) {
    if (v == value) return n;
  }
  return "?";
}

// Reading: every failure is a message naming the key; collected in `error` (first one wins).
class Reader {
 public:
  const json* at(const json& obj, const char* key, const std::string& path) {
    if (!obj.is_object() || !obj.contains(key)) {
      fail(path + "." + key + ": missing");
      return nullptr;
    }
    return &obj.at(key);
  }
  template <typename T>
  T get(const json& obj, const char* key, const std::string& path, T fallback = T{}) {
    const json* v = at(obj, key, path);
    if (!v) return fallback;
    try {
      return v->get<T>();
    } catch (const json::exception&) {
      fail(path + "." + key + ": wrong type");
      return fallback;
    }
  }
  template <typename E, size_t N>
  E get_enum(const Names<E, N>& names, const json& obj, const char* key, const std::string& path) {
    std::string text = get<std::string>(obj, key, path);
    for (const auto& [v, n] : names) {
      if (text == n) return v;
    }
    fail(path + "." + key + ": unknown value `" + text + "`");
    return names[0].first;
  }
  template <typename T>
  std::optional<T> get_optional(const json& obj, const char* key, const std::string& path) {
    const json* v = at(obj, key, path);
    if (!v || v->is_null()) return std::nullopt;
    return get<T>(obj, key, path);
  }
  void fail(std::string message) {
    if (error.empty()) error = std::move(message);
  }
  std::string error;
};

ojson rule_to_json(const HostRule& rule) {
  ojson out;
  out["text"] = rule.text;
  out["kind"] = rule.kind == HostRule::Kind::exact ? "exact" : rule.kind == HostRule::Kind::suffix ? "suffix" : "ip_cidr";
  out["host"] = rule.host;
  out["cidr"] = rule.cidr ? ojson(rule.cidr->to_string()) : ojson(nullptr);
  out["ports"] = rule.ports;
  out["inspect"] = rule.inspect;
  out["protocol"] = std::string(protocol_name(rule.protocol));
  out["tls"] = std::string(tls_name(rule.tls));
  if (rule.tls == HostRule::Tls::terminate) {
    out["methods"] = rule.methods;
    out["paths"] = rule.paths;
    ojson credentials = ojson::array();
    for (const auto& c : rule.credentials) {
      // Where the secret comes from, never the secret: a compiled policy holds none.
      ojson one{{"name", c.name},         {"env", c.env},           {"header", c.header},
                {"scheme", c.scheme},     {"from_env", c.from_env}, {"from_file", c.from_file}};
      credentials.push_back(std::move(one));
    }
    out["credentials"] = std::move(credentials);
    out["upstream_ca"] = rule.upstream_ca;
  }
  return out;
}

ojson optional_json(const std::optional<uint64_t>& v) { return v ? ojson(*v) : ojson(nullptr); }

}  // namespace

const char* to_string(MountStep::Kind kind) { return name_of(kMountKinds, kind); }
const char* to_string(FsAccess access) { return name_of(kFsAccess, access); }
const char* to_string(HomeMode mode) { return name_of(kHomeModes, mode); }
const char* to_string(GitMode mode) { return name_of(kGitModes, mode); }
const char* to_string(NetMode mode) { return name_of(kNetModes, mode); }
const char* to_string(OnUnlisted on_unlisted) { return name_of(kOnUnlisted, on_unlisted); }
const char* to_string(SeccompLevel level) { return name_of(kSeccompLevels, level); }

nlohmann::ordered_json spec_to_json(const SandboxSpec& spec) {
  ojson out;
  out["version"] = spec.version;
  out["workspace"] = spec.workspace;
  out["workspace_read_only"] = spec.workspace_read_only;
  out["cwd"] = spec.cwd;
  out["home"] = to_string(spec.home);
  out["home_path"] = spec.home_path;
  out["home_exposed"] = spec.home_exposed;
  out["git"] = to_string(spec.git);
  out["hostname"] = spec.hostname;
  ojson mounts = ojson::array();
  for (const auto& m : spec.mounts) {
    ojson step;
    step["kind"] = to_string(m.kind);
    step["source"] = m.source;
    step["target"] = m.target;
    step["optional"] = m.optional;
    step["system"] = m.system;
    mounts.push_back(std::move(step));
  }
  out["mounts"] = std::move(mounts);
  out["protected_paths"] = spec.protected_paths;

  ojson landlock;
  landlock["required"] = spec.landlock.required;
  ojson paths = ojson::array();
  for (const auto& rule : spec.landlock.paths) paths.push_back(ojson{{"path", rule.path}, {"access", to_string(rule.access)}});
  landlock["paths"] = std::move(paths);
  landlock["tcp_connect_ports"] = spec.landlock.tcp_connect_ports;
  landlock["tcp_bind_ports"] = spec.landlock.tcp_bind_ports;
  landlock["scope_abstract_unix"] = spec.landlock.scope_abstract_unix;
  landlock["scope_signal"] = spec.landlock.scope_signal;
  out["landlock"] = std::move(landlock);

  ojson seccomp;
  seccomp["level"] = to_string(spec.seccomp.level);
  seccomp["deny_sets"] = spec.seccomp.deny_sets;
  seccomp["allow_syscalls"] = spec.seccomp.allow_syscalls;
  seccomp["nested_namespaces"] = spec.seccomp.nested_namespaces;
  out["seccomp"] = std::move(seccomp);

  ojson net;
  net["mode"] = to_string(spec.network.mode);
  net["allow_all"] = spec.network.allow_all;
  ojson allow = ojson::array(), deny = ojson::array(), priv = ojson::array();
  for (const auto& r : spec.network.allow) allow.push_back(rule_to_json(r));
  for (const auto& r : spec.network.deny) deny.push_back(rule_to_json(r));
  for (const auto& c : spec.network.allow_private) priv.push_back(c.to_string());
  net["allow"] = std::move(allow);
  net["deny"] = std::move(deny);
  net["allow_private"] = std::move(priv);
  ojson hosts = ojson::object();
  for (const auto& [name, ip] : spec.network.hosts) hosts[name] = ip;
  net["hosts"] = std::move(hosts);
  net["on_unlisted"] = to_string(spec.network.on_unlisted);
  net["http_proxy_port"] = spec.network.http_proxy_port;
  net["socks_proxy_port"] = spec.network.socks_proxy_port;
  net["unix_sockets"] = spec.network.unix_sockets;
  net["dns_port"] = spec.network.dns_port;
  out["network"] = std::move(net);

  ojson limits;
  limits["memory_bytes"] = optional_json(spec.limits.memory_bytes);
  limits["pids"] = optional_json(spec.limits.pids);
  limits["cpu_time_seconds"] = optional_json(spec.limits.cpu_time_seconds);
  limits["wall_time_ms"] = optional_json(spec.limits.wall_time_ms);
  limits["file_size_bytes"] = optional_json(spec.limits.file_size_bytes);
  limits["open_files"] = optional_json(spec.limits.open_files);
  out["limits"] = std::move(limits);

  ojson env = ojson::array();
  for (const auto& [k, v] : spec.env) env.push_back(ojson::array({k, v}));
  out["env"] = std::move(env);
  return out;
}

Result<SandboxSpec> spec_from_json(const nlohmann::json& in) {
  Reader r;
  SandboxSpec spec;
  spec.version = r.get<int>(in, "version", "spec");
  spec.workspace = r.get<std::string>(in, "workspace", "spec");
  spec.workspace_read_only = r.get<bool>(in, "workspace_read_only", "spec");
  spec.cwd = r.get<std::string>(in, "cwd", "spec");
  spec.home = r.get_enum(kHomeModes, in, "home", "spec");
  spec.home_path = r.get<std::string>(in, "home_path", "spec");
  spec.home_exposed = r.get<std::string>(in, "home_exposed", "spec");
  spec.git = r.get_enum(kGitModes, in, "git", "spec");
  spec.hostname = r.get<std::string>(in, "hostname", "spec");
  if (const json* mounts = r.at(in, "mounts", "spec"); mounts && mounts->is_array()) {
    for (const auto& m : *mounts) {
      MountStep step;
      step.kind = r.get_enum(kMountKinds, m, "kind", "spec.mounts[]");
      step.source = r.get<std::string>(m, "source", "spec.mounts[]");
      step.target = r.get<std::string>(m, "target", "spec.mounts[]");
      step.optional = r.get<bool>(m, "optional", "spec.mounts[]");
      step.system = r.get<bool>(m, "system", "spec.mounts[]");
      spec.mounts.push_back(std::move(step));
    }
  }
  spec.protected_paths = r.get<std::vector<std::string>>(in, "protected_paths", "spec");

  if (const json* ll = r.at(in, "landlock", "spec")) {
    spec.landlock.required = r.get<bool>(*ll, "required", "spec.landlock");
    if (const json* paths = r.at(*ll, "paths", "spec.landlock"); paths && paths->is_array()) {
      for (const auto& p : *paths) {
        spec.landlock.paths.push_back(LandlockPathRule{r.get<std::string>(p, "path", "spec.landlock.paths[]"),
                                                       r.get_enum(kFsAccess, p, "access", "spec.landlock.paths[]")});
      }
    }
    spec.landlock.tcp_connect_ports = r.get<std::vector<uint16_t>>(*ll, "tcp_connect_ports", "spec.landlock");
    spec.landlock.tcp_bind_ports = r.get<std::vector<uint16_t>>(*ll, "tcp_bind_ports", "spec.landlock");
    spec.landlock.scope_abstract_unix = r.get<bool>(*ll, "scope_abstract_unix", "spec.landlock");
    spec.landlock.scope_signal = r.get<bool>(*ll, "scope_signal", "spec.landlock");
  }
  if (const json* sc = r.at(in, "seccomp", "spec")) {
    spec.seccomp.level = r.get_enum(kSeccompLevels, *sc, "level", "spec.seccomp");
    spec.seccomp.deny_sets = r.get<std::vector<std::string>>(*sc, "deny_sets", "spec.seccomp");
    spec.seccomp.allow_syscalls = r.get<std::vector<std::string>>(*sc, "allow_syscalls", "spec.seccomp");
    spec.seccomp.nested_namespaces = r.get<bool>(*sc, "nested_namespaces", "spec.seccomp");
  }
  if (const json* net = r.at(in, "network", "spec")) {
    auto& n = spec.network;
    n.mode = r.get_enum(kNetModes, *net, "mode", "spec.network");
    n.allow_all = r.get<bool>(*net, "allow_all", "spec.network");
    for (const char* key : {"allow", "deny"}) {
      const json* list = r.at(*net, key, "spec.network");
      if (!list || !list->is_array()) continue;
      for (const auto& item : *list) {
        auto ports = r.get<std::vector<uint16_t>>(item, "ports", "spec.network.rule");
        std::string text = r.get<std::string>(item, "text", "spec.network.rule");
        // Re-parse from the written form (the port list separately), so the rule is validated again.
        std::string host_text = text;
        if (!ports.empty()) {
          auto colon = host_text.rfind(':');
          if (colon != std::string::npos && host_text.find(']') == std::string::npos &&
              host_text.find('/') == std::string::npos && host_text.find(':') == colon) {
            host_text = host_text.substr(0, colon);
          } else if (host_text.starts_with("[") && host_text.find("]:") != std::string::npos) {
            host_text = host_text.substr(0, host_text.find("]:") + 1);
          }
        }
        auto rule = ports.empty() ? HostRule::parse(text) : HostRule::parse(host_text, ports);
        if (!rule) {
          r.fail("spec.network." + std::string(key) + ": " + rule.status().message());
          continue;
        }
        rule->text = text;
        rule->inspect = r.get<bool>(item, "inspect", "spec.network.rule", true);
        const std::string protocol = r.get<std::string>(item, "protocol", "spec.network.rule", std::string("tcp"));
        if (protocol == "udp") {
          rule->protocol = HostRule::Protocol::udp;
        } else if (protocol != "tcp") {
          r.fail("spec.network." + std::string(key) + ": unknown protocol `" + protocol + "`");
          continue;
        }
        if (r.get<std::string>(item, "tls", "spec.network.rule", std::string("passthrough")) == "terminate") {
          rule->tls = HostRule::Tls::terminate;
          rule->methods = r.get<std::vector<std::string>>(item, "methods", "spec.network.rule");
          rule->paths = r.get<std::vector<std::string>>(item, "paths", "spec.network.rule");
          rule->upstream_ca = r.get<std::string>(item, "upstream_ca", "spec.network.rule");
          const json* credentials = r.at(item, "credentials", "spec.network.rule");
          for (const auto& c : credentials && credentials->is_array() ? *credentials : json::array()) {
            HttpCredential one;
            one.name = r.get<std::string>(c, "name", "spec.network.rule.credentials");
            one.env = r.get<std::string>(c, "env", "spec.network.rule.credentials");
            one.header = r.get<std::string>(c, "header", "spec.network.rule.credentials");
            one.scheme = r.get<std::string>(c, "scheme", "spec.network.rule.credentials");
            one.from_env = r.get<std::string>(c, "from_env", "spec.network.rule.credentials");
            one.from_file = r.get<std::string>(c, "from_file", "spec.network.rule.credentials");
            rule->credentials.push_back(std::move(one));
          }
        }
        (std::string(key) == "allow" ? n.allow : n.deny).push_back(*rule);
      }
    }
    for (const auto& text : r.get<std::vector<std::string>>(*net, "allow_private", "spec.network")) {
      auto cidr = Cidr::parse(text);
      if (!cidr) {
        r.fail("spec.network.allow_private: " + cidr.status().message());
        continue;
      }
      n.allow_private.push_back(*cidr);
    }
    n.hosts = r.get<std::map<std::string, std::string>>(*net, "hosts", "spec.network");
    n.on_unlisted = r.get_enum(kOnUnlisted, *net, "on_unlisted", "spec.network");
    n.http_proxy_port = r.get<uint16_t>(*net, "http_proxy_port", "spec.network");
    n.socks_proxy_port = r.get<uint16_t>(*net, "socks_proxy_port", "spec.network");
    n.unix_sockets = r.get<std::vector<std::string>>(*net, "unix_sockets", "spec.network");
    for (const auto& path : n.unix_sockets) {
      if (path.empty() || path[0] != '/') r.fail("spec.network.unix_sockets: `" + path + "` is not an absolute path");
    }
    n.dns_port = r.get<uint16_t>(*net, "dns_port", "spec.network");
  }
  if (const json* lim = r.at(in, "limits", "spec")) {
    auto& l = spec.limits;
    l.memory_bytes = r.get_optional<uint64_t>(*lim, "memory_bytes", "spec.limits");
    l.pids = r.get_optional<uint64_t>(*lim, "pids", "spec.limits");
    l.cpu_time_seconds = r.get_optional<uint64_t>(*lim, "cpu_time_seconds", "spec.limits");
    l.wall_time_ms = r.get_optional<uint64_t>(*lim, "wall_time_ms", "spec.limits");
    l.file_size_bytes = r.get_optional<uint64_t>(*lim, "file_size_bytes", "spec.limits");
    l.open_files = r.get_optional<uint64_t>(*lim, "open_files", "spec.limits");
  }
  spec.env = r.get<std::vector<std::pair<std::string, std::string>>>(in, "env", "spec");
  if (!r.error.empty()) return Status::error(r.error);
  return spec;
}

}  // namespace oishell
