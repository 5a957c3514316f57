// `oishell run` flags on top of a loaded policy: they add; `hide` and `network.deny` still win at compile time.
#include <algorithm>
#include <cctype>

#include "policy/compiler.h"
#include "policy/paths.h"
#include "policy/units.h"

namespace oishell::policy {
namespace {

const char kFile[] = "command line";

SourcePos cli_pos() { return SourcePos{kFile, 0, 0}; }

// Relative paths on the command line mean the current directory, as in a shell.
std::string absolute_from_cli(const std::string& text, const CompileContext& context) {
  if (text.empty() || text[0] == '/' || text[0] == '~' || text[0] == '$') return text;
  return context.cwd + "/" + text;
}

void add_paths(const std::vector<std::string>& texts, const char* flag, const CompileContext& context,
               std::vector<PathItem>& into, std::vector<Diagnostic>& errors) {
  for (const auto& text : texts) {
    std::string path = absolute_from_cli(text, context);
    if (Status s = check_path_syntax(path, PathRole::absolute); !s) {
      errors.push_back(Diagnostic{cli_pos(), flag, s.message(), ""});
      continue;
    }
    into.push_back(PathItem{path, cli_pos()});
  }
}

}  // namespace

void apply_overrides(Policy& policy, const PolicyOverrides& overrides, const CompileContext& context,
                     std::vector<Diagnostic>& errors) {
  auto& fs = policy.filesystem;
  if (overrides.workspace) {
    if (Status s = check_path_syntax(*overrides.workspace, PathRole::workspace); !s) {
      errors.push_back(Diagnostic{cli_pos(), "--workspace", s.message(), ""});
    } else {
      fs.workspace.set(*overrides.workspace, cli_pos());
    }
  }
  if (overrides.allow_home_workspace) fs.allow_home_workspace.set(true, cli_pos());
  add_paths(overrides.read_only, "--ro", context, fs.read_only, errors);
  add_paths(overrides.read_write, "--rw", context, fs.read_write, errors);
  add_paths(overrides.hide, "--hide", context, fs.hide, errors);
  add_paths(overrides.unix_sockets, "--unix", context, policy.network.unix_sockets, errors);
  for (const auto& domain : overrides.allow_domains) {
    auto rule = HostRule::parse(domain);
    if (!rule) {
      errors.push_back(Diagnostic{cli_pos(), "--allow-domain", rule.status().message(),
                                  domain == "*" ? "allow_all: true in a policy file allows every destination" : ""});
      continue;
    }
    policy.network.allow.push_back(HostItem{*rule, cli_pos()});
  }
  for (const auto& destination : overrides.allow_udp) {
    auto rule = HostRule::parse(destination);
    if (rule && rule->ports.empty()) rule = Status::error("`" + destination + "` names no port");
    if (!rule) {
      errors.push_back(Diagnostic{cli_pos(), "--allow-udp", rule.status().message(),
                                  "HOST:PORT, e.g. --allow-udp dns.example:53 (one port per flag)"});
      continue;
    }
    rule->protocol = HostRule::Protocol::udp;
    policy.network.allow.push_back(HostItem{*rule, cli_pos()});
  }
  if (overrides.net_mode) {
    if (*overrides.net_mode == "none") {
      policy.network.mode.set(NetMode::none, cli_pos());
    } else if (*overrides.net_mode == "proxy") {
      policy.network.mode.set(NetMode::proxy, cli_pos());
    } else {
      errors.push_back(Diagnostic{cli_pos(), "--net", "unknown mode `" + *overrides.net_mode + "`", "none | proxy"});
    }
  }
  for (const auto& kv : overrides.env_set) {
    auto eq = kv.find('=');
    std::string name = kv.substr(0, eq);
    bool valid = eq != std::string::npos && !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    std::string upper = name;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    bool reserved = upper == "HOME" || upper == "PWD" || upper.ends_with("_PROXY");
    if (!valid || reserved) {
      errors.push_back(Diagnostic{cli_pos(), "--env", "`" + kv + "`: " +
                                  (valid ? "set by oishell inside the sandbox" : "expected NAME=VALUE"), ""});
      continue;
    }
    std::string value = kv.substr(eq + 1);
    auto& set = policy.env.set;
    auto it = std::find_if(set.begin(), set.end(), [&](const auto& e) { return e.first == name; });
    if (it != set.end()) {
      it->second = value;
    } else {
      set.emplace_back(name, value);
    }
  }
  if (overrides.wall_time) {
    auto ms = parse_duration_ms(*overrides.wall_time);
    if (!ms || *ms == 0) {
      errors.push_back(Diagnostic{cli_pos(), "--timeout", "`" + *overrides.wall_time + "` is not a duration",
                                  "like 30s, 10m or 1h30m"});
    } else {
      policy.limits.wall_time_ms.set(*ms, cli_pos());
    }
  }
  if (overrides.memory) {
    auto bytes = parse_size(*overrides.memory);
    if (!bytes || *bytes < (16ull << 20)) {
      errors.push_back(Diagnostic{cli_pos(), "--memory", "`" + *overrides.memory + "` is not a size of 16 MiB or more",
                                  "like 512MiB or 2GiB"});
    } else {
      policy.limits.memory_bytes.set(*bytes, cli_pos());
    }
  }
}

}  // namespace oishell::policy
