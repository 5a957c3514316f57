// Policy file parsing: the top level, `filesystem` and `env`. Network, process and limits are in parse_sections.cc.
#include "policy/parse.h"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "policy/parse_util.h"
#include "policy/paths.h"

namespace oishell::policy {

namespace detail {
void parse_network(NodeReader& reader, const YamlNode& node, NetworkPolicy& out);
void parse_process(NodeReader& reader, const YamlNode& node, ProcessPolicy& out);
void parse_limits(NodeReader& reader, const YamlNode& node, LimitsPolicy& out);
}  // namespace detail

namespace {

using detail::NodeReader;

void parse_paths(NodeReader& reader, const YamlNode& node, const std::string& key, PathRole role,
                 std::vector<PathItem>& out) {
  auto items = reader.sequence_items(node, key);
  for (size_t i = 0; i < items.size(); ++i) {
    std::string path = NodeReader::item_path(key, i);
    auto text = reader.string(items[i], path);
    if (!text) continue;
    Status syntax = check_path_syntax(*text, role);
    if (!syntax) {
      reader.error(items[i], path, syntax.message());
      continue;
    }
    out.push_back(PathItem{*text, reader.pos(items[i])});
  }
}

void parse_filesystem(NodeReader& reader, const YamlNode& node, FilesystemPolicy& out) {
  static const std::vector<std::string> kKeys = {"workspace", "workspace_read_only", "read_only", "read_write",
                                                 "hide",      "protect",             "home",      "git",
                                                 "allow_home_workspace"};
  for (auto& [key, value] : reader.map_entries(node, "filesystem", kKeys)) {
    std::string path = "filesystem." + key;
    if (key == "workspace") {
      if (auto text = reader.string(value, path)) {
        Status syntax = check_path_syntax(*text, PathRole::workspace);
        if (syntax) {
          out.workspace.set(*text, reader.pos(value));
        } else {
          reader.error(value, path, syntax.message());
        }
      }
    } else if (key == "workspace_read_only") {
      if (auto b = reader.boolean(value, path)) out.workspace_read_only.set(*b, reader.pos(value));
    } else if (key == "read_only") {
      parse_paths(reader, value, path, PathRole::absolute, out.read_only);
    } else if (key == "read_write") {
      parse_paths(reader, value, path, PathRole::absolute, out.read_write);
    } else if (key == "hide") {
      parse_paths(reader, value, path, PathRole::absolute, out.hide);
    } else if (key == "protect") {
      parse_paths(reader, value, path, PathRole::workspace_relative, out.protect);
    } else if (key == "home") {
      if (auto c = reader.choice(value, path, {"tmpfs", "workspace", "none"})) {
        HomeMode mode = *c == "tmpfs" ? HomeMode::tmpfs : *c == "workspace" ? HomeMode::workspace : HomeMode::none;
        out.home.set(mode, reader.pos(value));
      }
    } else if (key == "git") {
      if (auto c = reader.choice(value, path, {"read_only", "commit"})) {
        out.git.set(*c == "commit" ? GitMode::commit : GitMode::read_only, reader.pos(value));
      }
    } else if (key == "allow_home_workspace") {
      if (auto b = reader.boolean(value, path)) out.allow_home_workspace.set(*b, reader.pos(value));
    }
  }
}

bool valid_env_name(const std::string& name) {
  if (name.empty() || name.size() > 128 || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Variables oishell itself defines inside the sandbox; a policy may not pass or set them.
bool reserved_env_name(std::string name) {
  for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name == "HOME" || name == "PWD" || name == "HTTP_PROXY" || name == "HTTPS_PROXY" || name == "ALL_PROXY" ||
         name == "NO_PROXY";
}

bool check_env_name(NodeReader& reader, const YamlNode& node, const std::string& path, const std::string& name) {
  if (!valid_env_name(name)) {
    reader.error(node, path, "`" + name + "` is not a valid environment variable name", "letters, digits and _");
    return false;
  }
  if (reserved_env_name(name)) {
    reader.error(node, path, "`" + name + "` is set by oishell inside the sandbox",
                 "HOME, PWD and the proxy variables follow filesystem.home and network.mode");
    return false;
  }
  return true;
}

void parse_env(NodeReader& reader, const YamlNode& node, EnvPolicy& out) {
  for (auto& [key, value] : reader.map_entries(node, "env", {"pass", "set"})) {
    if (key == "pass") {
      auto items = reader.sequence_items(value, "env.pass");
      for (size_t i = 0; i < items.size(); ++i) {
        std::string path = NodeReader::item_path("env.pass", i);
        auto name = reader.string(items[i], path);
        if (name && check_env_name(reader, items[i], path, *name)) out.pass.emplace_back(*name, reader.pos(items[i]));
      }
    } else {
      for (auto& [name, v] : reader.free_map_entries(value, "env.set")) {
        std::string path = "env.set." + name;
        if (!check_env_name(reader, v, path, name)) continue;
        auto text = reader.string(v, path);
        if (!text) continue;
        if (text->find('\0') != std::string::npos) {
          reader.error(v, path, "NUL byte in value");
          continue;
        }
        out.set.emplace_back(name, *text);
      }
    }
  }
}

}  // namespace

const std::vector<std::string>& top_level_keys() {
  static const std::vector<std::string> kKeys = {"version",  "description", "extends", "filesystem", "landlock",
                                                 "network",  "process",     "limits",  "env"};
  return kKeys;
}

Policy parse_policy(const YamlNode& root, const std::string& file, std::vector<Diagnostic>& errors,
                    SourcePos* extends_pos) {
  Policy policy;
  size_t first_error = errors.size();
  NodeReader reader(file, errors);
  if (!root.is_map()) {
    reader.error(root, "", "a policy must be a mapping of keys, found " + detail::node_kind(root),
                 "start with `version: 1`");
    return policy;
  }
  bool has_version = false;
  for (auto& [key, value] : reader.map_entries(root, "", top_level_keys())) {
    if (key == "version") {
      has_version = true;
      if (auto v = reader.integer(value, key, 1, 1000)) {
        if (*v != kPolicyVersion) {
          reader.error(value, key, "unsupported policy version " + std::to_string(*v),
                       "this oishell reads version " + std::to_string(kPolicyVersion));
        }
        policy.version = static_cast<int>(*v);
      }
    } else if (key == "description") {
      if (auto s = reader.string(value, key)) policy.description = *s;
    } else if (key == "extends") {
      if (auto s = reader.string(value, key)) {
        if (s->empty()) {
          reader.error(value, key, "empty", "a built-in profile name like `default`, or a path");
        } else {
          policy.extends = *s;
          if (extends_pos) *extends_pos = reader.pos(value);
        }
      }
    } else if (key == "filesystem") {
      parse_filesystem(reader, value, policy.filesystem);
    } else if (key == "landlock") {
      if (auto c = reader.choice(value, key, {"required", "best_effort"})) {
        policy.landlock_required.set(*c == "required", reader.pos(value));
      }
    } else if (key == "network") {
      detail::parse_network(reader, value, policy.network);
    } else if (key == "process") {
      detail::parse_process(reader, value, policy.process);
    } else if (key == "limits") {
      detail::parse_limits(reader, value, policy.limits);
    } else if (key == "env") {
      parse_env(reader, value, policy.env);
    }
  }
  if (!has_version) {
    Diagnostic d;
    d.pos = reader.pos(root);
    d.key_path = "version";
    d.message = "missing";
    d.hint = "start the file with `version: 1`";
    errors.push_back(std::move(d));
  }
  std::stable_sort(errors.begin() + static_cast<long>(first_error), errors.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::tie(a.pos.line, a.pos.column) < std::tie(b.pos.line, b.pos.column);
                   });
  return policy;
}

}  // namespace oishell::policy
