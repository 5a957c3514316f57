// policy_schema(): see schema.h. Kept beside parse.cc's key lists; a unit test checks they agree.
#include "policy/schema.h"

#include <string>
#include <vector>

namespace oishell::policy {
namespace {

using ojson = nlohmann::ordered_json;

ojson str(const std::string& description) { return ojson{{"type", "string"}, {"description", description}}; }
ojson boolean(const std::string& description, bool def) {
  return ojson{{"type", "boolean"}, {"default", def}, {"description", description}};
}
ojson choice(const std::vector<std::string>& values, const std::string& def, const std::string& description) {
  return ojson{{"enum", values}, {"default", def}, {"description", description}};
}
ojson list_of(ojson items, const std::string& description) {
  return ojson{{"type", "array"}, {"items", std::move(items)}, {"description", description}};
}
ojson object(ojson properties, const std::string& description) {
  return ojson{{"type", "object"},
               {"additionalProperties", false},
               {"properties", std::move(properties)},
               {"description", description}};
}

const char kSizePattern[] = "^[0-9]+ ?(B|KiB|MiB|GiB|TiB|KB|kB|MB|GB|TB)?$";
const char kDurationPattern[] = "^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$";

}  // namespace

nlohmann::ordered_json policy_schema() {
  ojson host_rule = ojson{
      {"oneOf",
       ojson::array(
           {str("a host (example.com), *.suffix (subdomains only), an IP or CIDR, with an optional :port"),
            object(ojson{{"host", str("a host, *.suffix, IP or CIDR, with an optional :port when `ports` is not given")},
                         {"ports", list_of(ojson{{"type", "integer"}, {"minimum", 1}, {"maximum", 65535}},
                                           "ports; empty = any")},
                         {"inspect", boolean("allow rules only. true: the first bytes must be a TLS ClientHello "
                                             "naming the host or an HTTP/1.x request whose Host names it, anything "
                                             "else is closed; false: any protocol passes unchecked, and a program "
                                             "that ignores the proxy is connected kernel to kernel",
                                             true)},
                         {"protocol", choice({"tcp", "udp"}, "tcp",
                                             "allow rules only. udp: datagrams from connected sockets, copied by "
                                             "the supervisor's datagram relay to the host and ports named; a udp "
                                             "rule must list its ports and has no `inspect`")},
                         {"tls", choice({"passthrough", "terminate"}, "passthrough",
                                        "allow rules only. terminate: the relay is the TLS server the sandbox talks "
                                        "to (a certificate authority of the sandbox's own, trusted inside) and a "
                                        "verified TLS client of the host, so it reads every request: needed by "
                                        "methods, paths, credentials and upstream_ca; needs a host name, tcp and "
                                        "inspection")},
                         {"methods", list_of(str("an HTTP method (GET, HEAD, POST...)"),
                                             "tls: terminate only. Requests with another method get 403; empty = "
                                             "every method")},
                         {"paths", list_of(str("a glob on the decoded path: * within a segment, ** any segments"),
                                           "tls: terminate only. Requests for another path get 403; empty = every "
                                           "path")},
                         {"credentials",
                          list_of(object(ojson{{"name", str("[a-z0-9][a-z0-9_-]*: in the placeholder and messages")},
                                               {"env", str("the variable inside that holds the placeholder")},
                                               {"header", str("the header the secret goes in; default Authorization")},
                                               {"scheme", str("put before the secret: Bearer, token; default none")},
                                               {"from_env", str("the secret: a variable of oishell's environment")},
                                               {"from_file", str("the secret: a file outside the sandbox")}},
                                         "a secret the relay adds; the sandbox holds only a placeholder"),
                                  "tls: terminate only")},
                         {"upstream_ca", str("tls: terminate only. A PEM file: the only certificates trusted for "
                                             "the host (a private service); default the host's trust store")}},
                   "a host with a list of ports")})}};
  {
    ojson& credential = host_rule["oneOf"][1]["properties"]["credentials"]["items"];
    credential["required"] = ojson::array({"name", "env"});
    credential["oneOf"] = ojson::array({ojson{{"required", ojson::array({"from_env"})}},
                                        ojson{{"required", ojson::array({"from_file"})}}});
  }
  host_rule["oneOf"][1]["required"] = ojson::array({"host"});
  ojson path = str("an absolute path; may start with ~, $HOME, $WORKSPACE or $TMPDIR; no ..");

  ojson filesystem = object(
      ojson{{"workspace", str("the read-write project directory and the commands' cwd; relative to the current "
                              "directory; default .")},
            {"workspace_read_only", boolean("bind the workspace read-only", false)},
            {"read_only", list_of(path, "extra host paths visible read-only")},
            {"read_write", list_of(path, "extra host paths visible read-write")},
            {"hide", list_of(path, "paths invisible even where a parent is visible; always wins")},
            {"protect", list_of(str("a path relative to the workspace"),
                                "workspace paths that stay read-only (code the host runs later)")},
            {"home", choice({"tmpfs", "workspace", "none"}, "tmpfs", "what $HOME is inside")},
            {"git", choice({"read_only", "commit"}, "read_only",
                           "the workspace's .git inside: read_only (status, diff, log work), or commit (objects, "
                           "refs, index writable; config, hooks and what git obeys stay read-only)")},
            {"allow_home_workspace",
             boolean("allow a workspace or read_write path that contains the home directory (its dotfiles and "
                     "~/bin stay read-only)", false)}},
      "what the sandbox sees of the host filesystem");

  ojson network = object(
      ojson{{"mode", choice({"none", "proxy"}, "proxy", "none: no network; proxy: only through oishell's proxy")},
            {"allow_all", boolean("allow every public destination", false)},
            {"allow", list_of(host_rule, "destinations allowed")},
            {"deny", list_of(host_rule, "destinations always denied; wins over allow")},
            {"allow_private", list_of(str("a CIDR"), "private ranges exempt from the private-address guard")},
            {"hosts", ojson{{"type", "object"},
                            {"additionalProperties", ojson{{"type", "string"}}},
                            {"description", "pinned resolution: host name -> IP"}}},
            {"on_unlisted", choice({"deny", "ask"}, "deny", "what happens to destinations no rule lists")},
            {"unix", list_of(path, "host paths of unix sockets that may be connected to (in any mode); every other "
                                   "socket outside the sandbox's own tmpfs is refused")}},
      "network access");

  ojson process = object(
      ojson{{"seccomp", choice({"default", "strict"}, "default", "seccomp deny level")},
            {"allow_syscalls", list_of(ojson{{"type", "string"}, {"pattern", "^[a-z0-9_]+$"}},
                                       "system calls taken out of the deny sets (e.g. ptrace)")},
            {"nested_namespaces", boolean("allow creating namespaces inside", false)},
            {"own_proc", choice({"required", "best_effort"}, "required",
                                "required: a /proc of the sandbox's own pid namespace, or no sandbox; best_effort: "
                                "where a container masks /proc, the container's, read-only, reported as degraded")}},
      "process confinement");

  auto size = [](const char* d) {
    return ojson{{"type", ojson::array({"string", "integer"})}, {"pattern", kSizePattern}, {"description", d}};
  };
  auto duration = [](const char* d) {
    return ojson{{"type", "string"}, {"pattern", kDurationPattern}, {"description", d}};
  };
  ojson limits = object(ojson{{"memory", size("memory, e.g. 2GiB (at least 16MiB)")},
                              {"pids", ojson{{"type", "integer"}, {"minimum", 1}, {"description", "processes"}}},
                              {"cpu_time", duration("CPU time, e.g. 10m")},
                              {"wall_time", duration("wall-clock time, e.g. 30m")},
                              {"file_size", size("largest file written, e.g. 4GiB")},
                              {"open_files", ojson{{"type", "integer"}, {"minimum", 16}, {"description", "open files"}}}},
                        "resource limits; unset = no limit");

  ojson env_name = ojson{{"type", "string"}, {"pattern", "^[A-Za-z_][A-Za-z0-9_]*$"}};
  ojson env = object(ojson{{"pass", list_of(env_name, "host variables passed in, when set")},
                           {"set", ojson{{"type", "object"},
                                         {"additionalProperties", ojson{{"type", "string"}}},
                                         {"description", "variables set inside"}}}},
                     "the environment inside; nothing else of the host's enters");

  ojson schema = object(ojson{{"version", ojson{{"const", 1}, {"description", "policy format version"}}},
                              {"description", str("one line shown by `oishell profiles`")},
                              {"extends", str("a built-in profile name or a path relative to this file")},
                              {"filesystem", std::move(filesystem)},
                              {"landlock", choice({"required", "best_effort"}, "required",
                                                  "required: refuse to start when a guarantee would be held by no layer "
                                                  "(docs/guarantees.md); best_effort: start and report it")},
                              {"network", std::move(network)},
                              {"process", std::move(process)},
                              {"limits", std::move(limits)},
                              {"env", std::move(env)}},
                        "an oishell sandbox policy");
  ojson out;
  out["$schema"] = "http://json-schema.org/draft-07/schema#";
  out["$id"] = "https://oishell.example/schema/policy-v1.json";
  out["title"] = "oishell policy";
  for (auto& [k, v] : schema.items()) out[k] = v;
  out["required"] = ojson::array({"version"});
  return out;
}

}  // namespace oishell::policy
