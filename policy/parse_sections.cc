// Policy file parsing: `network`, `process` and `limits` (the rest is in parse.cc).
#include <algorithm>
#include <cctype>

#include "policy/http_path.h"
#include "policy/http_token.h"
#include "policy/parse_util.h"
#include "policy/paths.h"
#include "policy/seccomp_sets.h"
#include "policy/units.h"

namespace oishell::policy::detail {
namespace {

const char kAllowAllHint[] = "to allow every public destination write `allow_all: true`";

// The keys of an allow rule that only a terminating relay can honour (issue 16).
struct HttpsKeys {
  std::optional<HostRule::Tls> tls;
  std::vector<std::string> methods, paths;
  std::vector<HttpCredential> credentials;
  std::string upstream_ca;
  const YamlNode* first = nullptr;  // the first of methods/paths/credentials/upstream_ca, for messages
  std::string first_key;
  bool ok = true;
};

bool is_credential_name(std::string_view name) {
  return !name.empty() && name.size() <= 32 && (std::islower(static_cast<unsigned char>(name[0])) ||
                                                std::isdigit(static_cast<unsigned char>(name[0]))) &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
                  c == '_' || c == '-';
         });
}

bool is_variable_name(std::string_view name) {
  return !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// {name:, env:, header:, scheme:, from_env: | from_file:}: where a secret comes from outside, and where it goes.
std::optional<HttpCredential> parse_credential(NodeReader& reader, const YamlNode& node, const std::string& path) {
  HttpCredential c;
  bool ok = true;
  const std::string example = "{name: github, env: GITHUB_TOKEN, scheme: Bearer, from_env: GH_TOKEN}";
  for (auto& [key, value] : reader.map_entries(node, path, {"name", "env", "header", "scheme", "from_env",
                                                             "from_file"})) {
    auto text = reader.string(value, path + "." + key);
    if (!text) {
      ok = false;
      continue;
    }
    if (key == "name") {
      if (!is_credential_name(*text)) {
        reader.error(value, path + ".name", "credential name `" + *text + "` is not [a-z0-9][a-z0-9_-]* (32 at most)",
                     "it appears in the placeholder and in messages: github, pypi-upload");
        ok = false;
      }
      c.name = *text;
    } else if (key == "env" || key == "from_env") {
      if (!is_variable_name(*text)) {
        reader.error(value, path + "." + key, "`" + *text + "` is not an environment variable name", "GITHUB_TOKEN");
        ok = false;
      }
      (key == "env" ? c.env : c.from_env) = *text;
    } else if (key == "header" || key == "scheme") {
      if (!is_token(*text)) {
        reader.error(value, path + "." + key, "`" + *text + "` is not an HTTP token",
                     key == "header" ? "Authorization, X-Api-Key" : "Bearer, token");
        ok = false;
      }
      (key == "header" ? c.header : c.scheme) = *text;
    } else {
      Status syntax = check_path_syntax(*text, PathRole::absolute);
      if (!syntax) {
        reader.error(value, path + ".from_file", syntax.message(), "a file outside the sandbox: ~/.config/gh/token");
        ok = false;
      }
      c.from_file = *text;
    }
  }
  if (!ok) return std::nullopt;
  for (const char* required : {"name", "env"}) {
    if ((std::string(required) == "name" ? c.name : c.env).empty()) {
      reader.error(node, path, std::string("missing `") + required + "`", example);
      return std::nullopt;
    }
  }
  if (c.from_env.empty() == c.from_file.empty()) {
    // The secret never comes from the policy text: from outside, from exactly one place.
    reader.error(node, path, "a credential takes its secret from exactly one of `from_env` and `from_file`",
                 "the secret itself never goes in a policy: " + example);
    return std::nullopt;
  }
  return c;
}

// tls, methods, paths, credentials, upstream_ca: read here, checked against the rest of the rule by the caller.
void parse_https_key(NodeReader& reader, const std::string& key, const YamlNode& value, const std::string& path,
                     HttpsKeys& out) {
  const std::string key_path = path + "." + key;
  if (key != "tls" && !out.first) {
    out.first = &value;
    out.first_key = key;
  }
  if (key == "tls") {
    auto text = reader.string(value, key_path);
    if (text && (*text == "terminate" || *text == "passthrough")) {
      out.tls = *text == "terminate" ? HostRule::Tls::terminate : HostRule::Tls::passthrough;
    } else {
      if (text) reader.error(value, key_path, "unknown tls mode `" + *text + "`", "terminate or passthrough");
      out.ok = false;
    }
  } else if (key == "upstream_ca") {
    auto text = reader.string(value, key_path);
    Status syntax = text ? check_path_syntax(*text, PathRole::absolute) : Status::ok();
    if (!text || !syntax) {
      if (text) reader.error(value, key_path, syntax.message(), "a PEM file of the certificates to trust upstream");
      out.ok = false;
    } else {
      out.upstream_ca = *text;
    }
  } else if (key == "credentials") {
    auto items = reader.sequence_items(value, key_path);
    for (size_t i = 0; i < items.size(); ++i) {
      auto c = parse_credential(reader, items[i], NodeReader::item_path(key_path, i));
      if (c) {
        out.credentials.push_back(*c);
      } else {
        out.ok = false;
      }
    }
  } else {  // methods, paths
    auto items = reader.sequence_items(value, key_path);
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string item_path = NodeReader::item_path(key_path, i);
      auto text = reader.string(items[i], item_path);
      if (!text) {
        out.ok = false;
        continue;
      }
      if (key == "methods") {
        auto method = normalise_method(*text);
        if (!method) {
          reader.error(items[i], item_path, method.status().message(), "GET, HEAD, POST");
          out.ok = false;
        } else {
          out.methods.push_back(*method);
        }
      } else {
        auto glob = PathGlob::parse(*text);
        if (!glob) {
          reader.error(items[i], item_path, glob.status().message(), "/repos/**, /simple/*/");
          out.ok = false;
        } else {
          out.paths.push_back(*text);
        }
      }
    }
  }
}

// The HTTPS keys against the rule they are on: they need TLS terminated, which needs a name, tcp, inspection.
bool apply_https_keys(NodeReader& reader, const YamlNode& node, const std::string& path, const HttpsKeys& keys,
                      HostRule& rule) {
  const bool terminate = keys.tls == HostRule::Tls::terminate;
  if (keys.first && !terminate) {
    // OpenShell's users met this one as 401s: a placeholder sent on as it is, because the proxy never saw it.
    reader.error(*keys.first, path + "." + keys.first_key,
                 "`" + keys.first_key + "` needs `tls: terminate` on the same rule",
                 "without it the relay only sees encrypted bytes: it cannot read a method or a path, and a "
                 "credential's placeholder would reach the server as it is");
    return false;
  }
  if (!terminate) return true;
  if (rule.protocol == HostRule::Protocol::udp) {
    reader.error(node, path + ".tls", "`tls: terminate` is for tcp rules", "datagrams are relayed as they are");
    return false;
  }
  if (rule.kind == HostRule::Kind::ip_cidr) {
    reader.error(node, path + ".tls", "`tls: terminate` needs a host name, not an address",
                 "the sandbox's certificate for the host names it: {host: api.example.com, tls: terminate}");
    return false;
  }
  if (!rule.inspect) {
    reader.error(node, path + ".inspect", "`inspect: false` and `tls: terminate` contradict each other",
                 "a terminated connection is read request by request; remove `inspect: false`");
    return false;
  }
  if (rule.kind == HostRule::Kind::suffix && !keys.credentials.empty()) {
    // The sandbox names the host it connects to: under a wildcard it picks which name gets the secret, one it may
    // control (a user's page on a shared domain, a dangling record).
    reader.error(node, path + ".credentials", "credentials need an exact host, not `" + rule.text + "`",
                 "under a wildcard the sandbox picks which host receives the secret; give the credential a rule of "
                 "its own: {host: api." + rule.host + ", tls: terminate, credentials: [...]}");
    return false;
  }
  rule.tls = HostRule::Tls::terminate;
  rule.methods = keys.methods;
  rule.paths = keys.paths;
  rule.credentials = keys.credentials;
  rule.upstream_ca = keys.upstream_ca;
  return true;
}

// An allow or deny entry: a string, or {host:, ports:, inspect:, protocol:, tls:, methods:, paths:, credentials:,
// upstream_ca:} (all but host and ports on allow rules only; a udp rule lists its ports and has no `inspect`; the
// HTTPS keys need `tls: terminate`).
std::optional<HostItem> parse_host_rule(NodeReader& reader, const YamlNode& node, const std::string& path,
                                        bool allow_list) {
  if (node.is_map()) {
    std::optional<std::string> host;
    std::vector<uint16_t> ports;
    bool ports_ok = true;
    std::optional<bool> inspect;
    bool inspect_ok = true;
    std::optional<HostRule::Protocol> protocol;
    const YamlNode* protocol_node = nullptr;
    HttpsKeys https;
    for (auto& [key, value] : reader.map_entries(node, path, {"host", "ports", "inspect", "protocol", "tls", "methods",
                                                              "paths", "credentials", "upstream_ca"})) {
      if (key == "tls" || key == "methods" || key == "paths" || key == "credentials" || key == "upstream_ca") {
        if (!allow_list) {
          reader.error(value, path + "." + key, "`" + key + "` only applies to allow rules",
                       "a denied destination is refused before any byte moves");
          inspect_ok = false;
        } else {
          parse_https_key(reader, key, value, path, https);
          inspect_ok = inspect_ok && https.ok;
        }
      } else if (key == "host") {
        host = reader.string(value, path + ".host");
      } else if (key == "protocol") {
        protocol_node = &value.get();
        if (!allow_list) {
          // A deny rule refuses the destination whatever the protocol.
          reader.error(value, path + ".protocol", "`protocol` only applies to allow rules",
                       "a deny rule refuses every protocol");
          inspect_ok = false;
        } else if (auto text = reader.string(value, path + ".protocol")) {
          if (*text == "tcp") {
            protocol = HostRule::Protocol::tcp;
          } else if (*text == "udp") {
            protocol = HostRule::Protocol::udp;
          } else {
            reader.error(value, path + ".protocol", "unknown protocol `" + *text + "`", "tcp or udp");
            inspect_ok = false;
          }
        } else {
          inspect_ok = false;
        }
      } else if (key == "inspect") {
        // A deny rule refuses before any byte moves: there is nothing to inspect, and silently accepting the key
        // would suggest otherwise.
        if (!allow_list) {
          reader.error(value, path + ".inspect", "`inspect` only applies to allow rules",
                       "a denied destination is refused before any byte moves");
          inspect_ok = false;
        } else if (auto b = reader.boolean(value, path + ".inspect")) {
          inspect = *b;
        } else {
          inspect_ok = false;
        }
      } else {
        auto items = reader.sequence_items(value, path + ".ports");
        for (size_t i = 0; i < items.size(); ++i) {
          auto port = reader.integer(items[i], NodeReader::item_path(path + ".ports", i), 1, 65535);
          if (port) {
            ports.push_back(static_cast<uint16_t>(*port));
          } else {
            ports_ok = false;
          }
        }
      }
    }
    if (!host) {
      if (ports_ok && inspect_ok) reader.error(node, path, "missing `host`", "{host: api.example.net, ports: [443]}");
      return std::nullopt;
    }
    if (!ports_ok || !inspect_ok) return std::nullopt;
    // Without `ports:` the host may carry its own `:port` ("example.com:22"), as in the string form.
    auto rule = ports.empty() ? HostRule::parse(*host) : HostRule::parse(*host, ports);
    if (!rule) {
      reader.error(node, path + ".host", rule.status().message(), *host == "*" ? kAllowAllHint : "");
      return std::nullopt;
    }
    if (protocol == HostRule::Protocol::udp) {
      // Datagrams are copied by the supervisor's datagram relay, never looked into: nothing to inspect.
      if (inspect) {
        reader.error(node, path + ".inspect", "`inspect` has no meaning for a udp rule",
                     "datagrams are relayed as they are; remove `inspect`");
        return std::nullopt;
      }
      // Every datagram destination is a host and a port the policy names: no rule opens a whole host.
      if (rule->ports.empty()) {
        reader.error(protocol_node ? *protocol_node : node, path + ".ports",
                     "a udp rule must list its ports: datagrams go only to a host and port the policy names",
                     "{host: ntp.example, ports: [123], protocol: udp}");
        return std::nullopt;
      }
      rule->protocol = HostRule::Protocol::udp;
    }
    if (inspect) rule->inspect = *inspect;
    if (!apply_https_keys(reader, node, path, https, *rule)) return std::nullopt;
    return HostItem{*rule, reader.pos(node)};
  }
  auto text = reader.string(node, path);
  if (!text) return std::nullopt;
  auto rule = HostRule::parse(*text);
  if (!rule) {
    bool everything = *text == "*" || text->starts_with("*:");
    reader.error(node, path, rule.status().message(), everything ? kAllowAllHint : "");
    return std::nullopt;
  }
  return HostItem{*rule, reader.pos(node)};
}

void parse_host_list(NodeReader& reader, const YamlNode& node, const std::string& path, bool allow_list,
                     std::vector<HostItem>& out) {
  auto items = reader.sequence_items(node, path);
  for (size_t i = 0; i < items.size(); ++i) {
    if (auto item = parse_host_rule(reader, items[i], NodeReader::item_path(path, i), allow_list)) {
      out.push_back(*item);
    }
  }
}

// `network.unix`: absolute host paths (variables allowed, as in the filesystem lists); whether each is a socket
// is checked when compiling, against the host.
void parse_unix_sockets(NodeReader& reader, const YamlNode& node, const std::string& path,
                        std::vector<PathItem>& out) {
  auto items = reader.sequence_items(node, path);
  for (size_t i = 0; i < items.size(); ++i) {
    std::string item_path = NodeReader::item_path(path, i);
    auto text = reader.string(items[i], item_path);
    if (!text) continue;
    Status syntax = check_path_syntax(*text, PathRole::absolute);
    if (!syntax) {
      reader.error(items[i], item_path, syntax.message(), "the host path of a socket, like /run/user/1000/bus");
      continue;
    }
    out.push_back(PathItem{*text, reader.pos(items[i])});
  }
}

bool valid_syscall_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

void parse_network(NodeReader& reader, const YamlNode& node, NetworkPolicy& out) {
  static const std::vector<std::string> kKeys = {"mode",  "allow_all",   "allow", "deny", "allow_private",
                                                 "hosts", "on_unlisted", "unix"};
  for (auto& [key, value] : reader.map_entries(node, "network", kKeys)) {
    std::string path = "network." + key;
    if (key == "mode") {
      if (auto c = reader.choice(value, path, {"none", "proxy"})) {
        out.mode.set(*c == "none" ? NetMode::none : NetMode::proxy, reader.pos(value));
      }
    } else if (key == "allow_all") {
      if (auto b = reader.boolean(value, path)) out.allow_all.set(*b, reader.pos(value));
    } else if (key == "allow") {
      parse_host_list(reader, value, path, /*allow_list=*/true, out.allow);
    } else if (key == "deny") {
      parse_host_list(reader, value, path, /*allow_list=*/false, out.deny);
    } else if (key == "allow_private") {
      auto items = reader.sequence_items(value, path);
      for (size_t i = 0; i < items.size(); ++i) {
        std::string item_path = NodeReader::item_path(path, i);
        auto text = reader.string(items[i], item_path);
        if (!text) continue;
        auto cidr = Cidr::parse(*text);
        if (!cidr) {
          reader.error(items[i], item_path, cidr.status().message(), "a CIDR like 127.0.0.0/8 or ::1/128");
          continue;
        }
        out.allow_private.push_back(CidrItem{*cidr, *text, reader.pos(items[i])});
      }
    } else if (key == "hosts") {
      for (auto& [name, ip_node] : reader.free_map_entries(value, path)) {
        std::string item_path = path + "." + name;
        auto normalised = normalise_host(name);
        if (!normalised || IpAddress::parse(*normalised)) {
          reader.error(ip_node, item_path, "`" + name + "` is not a host name", "hosts: {api.example.com: 127.0.0.2}");
          continue;
        }
        auto ip_text = reader.string(ip_node, item_path);
        if (!ip_text) continue;
        auto ip = IpAddress::parse(*ip_text);
        if (!ip) {
          reader.error(ip_node, item_path, "`" + *ip_text + "` is not an IP address", "an IPv4 or IPv6 literal");
          continue;
        }
        out.hosts[*normalised] = {ip->to_string(), reader.pos(ip_node)};
      }
    } else if (key == "on_unlisted") {
      if (auto c = reader.choice(value, path, {"deny", "ask"})) {
        out.on_unlisted.set(*c == "deny" ? OnUnlisted::deny : OnUnlisted::ask, reader.pos(value));
      }
    } else if (key == "unix") {
      parse_unix_sockets(reader, value, path, out.unix_sockets);
    }
  }
}

void parse_process(NodeReader& reader, const YamlNode& node, ProcessPolicy& out) {
  for (auto& [key, value] :
       reader.map_entries(node, "process", {"seccomp", "allow_syscalls", "nested_namespaces", "own_proc"})) {
    std::string path = "process." + key;
    if (key == "seccomp") {
      if (auto c = reader.choice(value, path, {"default", "strict"})) {
        out.seccomp.set(*c == "strict" ? SeccompLevel::strict : SeccompLevel::default_level, reader.pos(value));
      }
    } else if (key == "allow_syscalls") {
      auto items = reader.sequence_items(value, path);
      for (size_t i = 0; i < items.size(); ++i) {
        std::string item_path = NodeReader::item_path(path, i);
        auto name = reader.string(items[i], item_path);
        if (!name) continue;
        if (!valid_syscall_name(*name)) {
          reader.error(items[i], item_path, "`" + *name + "` is not a system call name", "like ptrace");
          continue;
        }
        if (std::string why = seccomp_sets::why_not_liftable(*name); !why.empty()) {
          reader.error(items[i], item_path, "`" + *name + "` cannot be allowed: " + why,
                       "remove it; no policy can take it out of the seccomp program");
          continue;
        }
        out.allow_syscalls.emplace_back(*name, reader.pos(items[i]));
      }
    } else if (key == "nested_namespaces") {
      if (auto b = reader.boolean(value, path)) out.nested_namespaces.set(*b, reader.pos(value));
    } else if (key == "own_proc") {
      if (auto c = reader.choice(value, path, {"required", "best_effort"})) {
        out.own_proc_required.set(*c == "required", reader.pos(value));
      }
    }
  }
}

void parse_limits(NodeReader& reader, const YamlNode& node, LimitsPolicy& out) {
  static const std::vector<std::string> kKeys = {"memory", "pids", "cpu_time", "wall_time", "file_size",
                                                 "open_files"};
  for (auto& [key, value] : reader.map_entries(node, "limits", kKeys)) {
    std::string path = "limits." + key;
    if (key == "memory" || key == "file_size") {
      auto text = reader.string(value, path);
      if (!text) continue;
      auto bytes = parse_size(*text);
      if (!bytes) {
        reader.error(value, path, "`" + *text + "` is not a size", "like 512MiB or 2GiB");
        continue;
      }
      uint64_t minimum = key == "memory" ? (16ull << 20) : 1;
      if (*bytes < minimum) {
        reader.error(value, path, "`" + *text + "` is too small (" + format_size(*bytes) + ")",
                     "at least " + format_size(minimum) + "; did you mean " + *text + "GiB?");
        continue;
      }
      (key == "memory" ? out.memory_bytes : out.file_size_bytes).set(*bytes, reader.pos(value));
    } else if (key == "cpu_time" || key == "wall_time") {
      auto text = reader.string(value, path);
      if (!text) continue;
      auto ms = parse_duration_ms(*text);
      if (!ms || *ms == 0) {
        reader.error(value, path, "`" + *text + "` is not a duration", "like 30s, 10m or 1h30m");
        continue;
      }
      if (key == "cpu_time") {
        out.cpu_time_seconds.set((*ms + 999) / 1000, reader.pos(value));
      } else {
        out.wall_time_ms.set(*ms, reader.pos(value));
      }
    } else if (key == "pids") {
      if (auto n = reader.integer(value, path, 1, 4'194'304)) out.pids.set(*n, reader.pos(value));
    } else if (key == "open_files") {
      if (auto n = reader.integer(value, path, 16, 1'048'576)) out.open_files.set(*n, reader.pos(value));
    }
  }
}

}  // namespace oishell::policy::detail
