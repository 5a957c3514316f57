// Loading policies and resolving `extends`: see load.h.
#include "policy/load.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <tuple>

#include "base/data_dir.h"
#include "policy/parse.h"
#include "policy/yaml_safe.h"

namespace oishell::policy {
namespace {

bool valid_profile_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
           c == '_';
  });
}

bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || s.ends_with(".yaml") || s.ends_with(".yml") || s.ends_with(".json");
}

std::string canonical(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return buf;
  return path;
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

class Loader {
 public:
  LoadResult run_file(const std::string& path, const std::string& label) {
    LoadResult result;
    result.policy = load_file(path, label, result.errors, 0);
    return result;
  }
  LoadResult run_text(std::string_view text, const std::string& file, const std::string& base_dir) {
    LoadResult result;
    YamlDocument doc = load_yaml(text, file);
    result.policy = from_document(doc, file, file, base_dir, result.errors, 0);
    return result;
  }

 private:
  Policy load_file(const std::string& path, const std::string& label, std::vector<Diagnostic>& errors, int depth) {
    std::string key = canonical(path);
    stack_.push_back(key);
    YamlDocument doc = load_yaml_file(path, /*allow_special=*/depth == 0);
    Policy policy = from_document(doc, path, label, dir_of(path), errors, depth);
    stack_.pop_back();
    return policy;
  }

  Policy from_document(YamlDocument& doc, const std::string& file, const std::string& label,
                       const std::string& base_dir, std::vector<Diagnostic>& errors, int depth) {
    if (!doc.errors.empty()) {
      errors.insert(errors.end(), doc.errors.begin(), doc.errors.end());
      return {};
    }
    SourcePos extends_pos;
    size_t first_error = errors.size();
    Policy policy = parse_policy(doc.root, file, errors, &extends_pos);
    policy.chain = {label};
    if (policy.extends.empty()) return policy;
    // An extends error joins this file's errors in line order (the parent's, if any, follow).
    auto fail = [&](std::string message, std::string hint) {
      errors.push_back(Diagnostic{extends_pos, "extends", std::move(message), std::move(hint)});
      std::stable_sort(errors.begin() + static_cast<long>(first_error), errors.end(),
                       [](const Diagnostic& a, const Diagnostic& b) {
                         return std::tie(a.pos.line, a.pos.column) < std::tie(b.pos.line, b.pos.column);
                       });
    };
    if (depth + 1 >= kMaxExtendsDepth) {
      fail("extends chain deeper than " + std::to_string(kMaxExtendsDepth), "");
      return policy;
    }
    std::string parent_path, parent_label;
    if (looks_like_path(policy.extends)) {
      parent_path = policy.extends[0] == '/' ? policy.extends : base_dir + "/" + policy.extends;
      parent_label = parent_path;
    } else if (valid_profile_name(policy.extends)) {
      parent_path = builtin_profile_path(policy.extends);
      parent_label = "profile " + policy.extends + " (" + parent_path + ")";
      if (::access(parent_path.c_str(), R_OK) != 0) {
        std::string hint = "built-in profiles: ";
        auto names = builtin_profile_names();
        std::string suggestion = did_you_mean(policy.extends, names);
        if (!suggestion.empty()) {
          hint = "did you mean `" + suggestion + "`?";
        } else {
          for (size_t i = 0; i < names.size(); ++i) hint += (i ? ", " : "") + names[i];
        }
        fail("unknown profile `" + policy.extends + "`", hint);
        return policy;
      }
    } else {
      fail("`" + policy.extends + "` is neither a profile name nor a path",
           "a name like `default`, or a path ending in .yaml");
      return policy;
    }
    std::string key = canonical(parent_path);
    if (std::find(stack_.begin(), stack_.end(), key) != stack_.end()) {
      std::string cycle;
      for (const auto& s : stack_) cycle += s + " -> ";
      fail("extends cycle: " + cycle + key, "a policy cannot extend itself, directly or through others");
      return policy;
    }
    Policy parent = load_file(parent_path, parent_label, errors, depth + 1);
    return merge_policies(parent, policy);
  }

  std::vector<std::string> stack_;
};

template <typename T>
void override_field(Field<T>& into, const Field<T>& from) {
  if (from.is_set()) into = from;
}

template <typename T, typename Same>
void append_unique(std::vector<T>& into, const std::vector<T>& from, Same same) {
  for (const auto& item : from) {
    if (std::none_of(into.begin(), into.end(), [&](const T& existing) { return same(existing, item); })) {
      into.push_back(item);
    }
  }
}

}  // namespace

Policy merge_policies(const Policy& base, const Policy& child) {
  Policy out = base;
  out.version = child.version;
  if (!child.description.empty()) out.description = child.description;
  out.extends = child.extends;
  out.chain.insert(out.chain.end(), child.chain.begin(), child.chain.end());
  auto same_path = [](const PathItem& a, const PathItem& b) { return a.text == b.text; };
  auto same_host = [](const HostItem& a, const HostItem& b) { return a.rule == b.rule; };
  auto same_cidr = [](const CidrItem& a, const CidrItem& b) { return a.cidr == b.cidr; };
  auto same_name = [](const auto& a, const auto& b) { return a.first == b.first; };

  auto& fs = out.filesystem;
  override_field(fs.workspace, child.filesystem.workspace);
  override_field(fs.workspace_read_only, child.filesystem.workspace_read_only);
  override_field(fs.home, child.filesystem.home);
  override_field(fs.git, child.filesystem.git);
  override_field(fs.allow_home_workspace, child.filesystem.allow_home_workspace);
  append_unique(fs.read_only, child.filesystem.read_only, same_path);
  append_unique(fs.read_write, child.filesystem.read_write, same_path);
  append_unique(fs.hide, child.filesystem.hide, same_path);
  append_unique(fs.protect, child.filesystem.protect, same_path);
  override_field(out.landlock_required, child.landlock_required);

  auto& net = out.network;
  override_field(net.mode, child.network.mode);
  override_field(net.allow_all, child.network.allow_all);
  override_field(net.on_unlisted, child.network.on_unlisted);
  append_unique(net.allow, child.network.allow, same_host);
  append_unique(net.deny, child.network.deny, same_host);
  append_unique(net.allow_private, child.network.allow_private, same_cidr);
  append_unique(net.unix_sockets, child.network.unix_sockets, same_path);
  for (const auto& [name, ip] : child.network.hosts) net.hosts[name] = ip;

  override_field(out.process.seccomp, child.process.seccomp);
  override_field(out.process.nested_namespaces, child.process.nested_namespaces);
  override_field(out.process.own_proc_required, child.process.own_proc_required);
  append_unique(out.process.allow_syscalls, child.process.allow_syscalls, same_name);

  auto& lim = out.limits;
  override_field(lim.memory_bytes, child.limits.memory_bytes);
  override_field(lim.pids, child.limits.pids);
  override_field(lim.cpu_time_seconds, child.limits.cpu_time_seconds);
  override_field(lim.wall_time_ms, child.limits.wall_time_ms);
  override_field(lim.file_size_bytes, child.limits.file_size_bytes);
  override_field(lim.open_files, child.limits.open_files);

  append_unique(out.env.pass, child.env.pass, same_name);
  for (const auto& [name, value] : child.env.set) {
    // `&name = name`: clang before 16 cannot capture a structured binding by name (the fuzz build's clang-14).
    auto it = std::find_if(out.env.set.begin(), out.env.set.end(),
                           [&name = name](const auto& e) { return e.first == name; });
    if (it != out.env.set.end()) {
      it->second = value;
    } else {
      out.env.set.emplace_back(name, value);
    }
  }
  return out;
}

std::string builtin_profile_path(const std::string& name) {
  if (!valid_profile_name(name)) return {};
  return data_path("profiles/" + name + ".yaml");
}

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names;
  // The machine's own profiles (an installed oishell only; "" otherwise), then the built-in ones: a name is listed
  // once, as --profile NAME finds it (data_path() looks in the machine's directory first).
  for (const std::string& dir : {local_profile_dir(), data_path("profiles")}) {
    if (dir.empty()) continue;
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), &::closedir);
    if (!d) continue;
    while (const dirent* e = ::readdir(d.get())) {
      std::string_view n = e->d_name;
      if (!n.ends_with(".yaml")) continue;
      n.remove_suffix(5);
      if (valid_profile_name(n)) names.emplace_back(n);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

LoadResult load_policy_file(const std::string& path) { return Loader().run_file(path, path); }

LoadResult load_profile(const std::string& name) {
  std::string path = builtin_profile_path(name);
  if (path.empty() || ::access(path.c_str(), R_OK) != 0) {
    LoadResult result;
    std::string hint = "built-in profiles: ";
    auto names = builtin_profile_names();
    std::string suggestion = did_you_mean(name, names);
    if (!suggestion.empty()) {
      hint = "did you mean `" + suggestion + "`?";
    } else {
      for (size_t i = 0; i < names.size(); ++i) hint += (i ? ", " : "") + names[i];
    }
    result.errors.push_back(Diagnostic{{}, "", "unknown profile `" + name + "`", hint});
    return result;
  }
  return Loader().run_file(path, "profile " + name + " (" + path + ")");
}

LoadResult load_policy(const PolicySource& source) {
  if (!source.file.empty()) return load_policy_file(source.file);
  return load_profile(source.profile.empty() ? "default" : source.profile);
}

LoadResult load_policy_text(std::string_view text, const std::string& file, const std::string& base_dir) {
  return Loader().run_text(text, file, base_dir);
}

}  // namespace oishell::policy
