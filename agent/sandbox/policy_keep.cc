// See policy_keep.h.
#include "agent/sandbox/policy_keep.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <vector>

#include <yaml-cpp/yaml.h>

#include "agent/host/atomic_file.h"
#include "agent/sandbox/workspace_changes.h"

namespace oishell::agent {
namespace {

constexpr const char* kWorkspacePolicy = ".oishell/policy.yaml";

std::string real_or_same(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

bool within(const std::string& path, const std::string& dir) {
  return !dir.empty() && (path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                                          path[dir.size()] == '/'));
}

bool names_policy_file(const std::string& policy) {
  return policy.find('/') != std::string::npos || policy.ends_with(".yaml") || policy.ends_with(".yml") ||
         policy.ends_with(".json");
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

size_t indent_of(const std::string& line) {
  size_t n = 0;
  while (n < line.size() && line[n] == ' ') ++n;
  return n;
}

bool blank_or_comment(const std::string& line) {
  size_t n = indent_of(line);
  return n == line.size() || line[n] == '#';
}

// Whether the parsed text's network.allow holds `rule` as a string entry.
bool allows(const std::string& text, const std::string& rule) {
  try {
    YAML::Node root = YAML::Load(text);
    YAML::Node allow = root["network"]["allow"];
    if (!allow || !allow.IsSequence()) return false;
    for (const auto& entry : allow) {
      if (entry.IsScalar() && entry.as<std::string>() == rule) return true;
    }
  } catch (const YAML::Exception&) {
  }
  return false;
}

// `text` with "    - RULE" in its top-level network.allow (block style, as this and `oishell learn` write), or an
// error when the file is laid out otherwise.
Result<std::string> with_allow_rule(const std::string& text, const std::string& rule) {
  if (allows(text, rule)) return text;
  std::vector<std::string> lines = split_lines(text);
  const std::string entry = "    - " + rule;
  size_t network = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("network:", 0) == 0) network = i;
  }
  if (network == lines.size()) {
    lines.insert(lines.end(), {"network:", "  allow:", entry});
  } else if (size_t after = lines[network].find_first_not_of(' ', 8);
             after != std::string::npos && lines[network][after] != '#') {
    return Status::error("its `network:` is not a block mapping");
  } else {
    size_t end = network + 1;  // the network block: lines indented below it
    while (end < lines.size() && (blank_or_comment(lines[end]) || indent_of(lines[end]) > 0)) ++end;
    size_t allow = lines.size();
    for (size_t i = network + 1; i < end; ++i) {
      if (indent_of(lines[i]) == 2 && lines[i].compare(2, 6, "allow:") == 0) allow = i;
    }
    if (allow == lines.size()) {
      lines.insert(lines.begin() + static_cast<long>(network) + 1, {"  allow:", entry});
    } else {
      std::string rest = lines[allow].substr(8);
      size_t first = rest.find_first_not_of(' ');
      if (first != std::string::npos && rest.compare(first, 2, "[]") == 0) {
        lines[allow] = "  allow:";
        lines.insert(lines.begin() + static_cast<long>(allow) + 1, entry);
      } else if (first != std::string::npos && rest[first] != '#') {
        return Status::error("its `network.allow` is not a block list");
      } else {
        size_t last = allow;  // after the list's last item
        for (size_t i = allow + 1; i < end; ++i) {
          if (blank_or_comment(lines[i])) continue;
          if (indent_of(lines[i]) <= 2) break;
          last = i;
        }
        lines.insert(lines.begin() + static_cast<long>(last) + 1, entry);
      }
    }
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  if (!allows(out, rule)) return Status::error("the rule could not be placed in its `network.allow`");
  return out;
}

std::string copy_path(const KeepContext& context, const std::string& policy_path) {
  std::string name;
  for (char c : policy_path) name += (c == '/') ? '%' : c;
  return context.state_dir + "/workspace-policies/" + name;
}

}  // namespace

Result<KeepPlan> plan_keep(const KeepContext& context, const std::string& rule) {
  const std::string by_hand = "\nTo keep it, add it yourself to the policy you start sessions with:\nnetwork:\n"
                              "  allow:\n    - " + rule;
  if (context.policy_from_profile) {
    return Status::error("this session's policy is the `policy:` mapping of its profile: add the rule there." +
                         by_hand);
  }
  const std::string workspace = real_or_same(context.workspace);
  const std::string config = real_or_same(context.config_dir);
  KeepPlan plan;
  std::string extends;
  if (!context.session_policy.empty() && names_policy_file(context.session_policy)) {
    std::string file = real_or_same(context.session_policy);
    if (within(file, workspace) || within(file, config)) {
      plan.path = file;
      plan.workspace_policy = file == workspace + "/" + kWorkspacePolicy;
    } else {
      extends = file;  // a file elsewhere is never written: the workspace policy extends it
    }
  } else {
    extends = context.session_policy.empty() ? "default" : context.session_policy;
  }
  if (plan.path.empty()) {
    plan.path = workspace + "/" + kWorkspacePolicy;
    plan.workspace_policy = true;
  }
  if (auto text = read_file(plan.path, 1 << 20); text) {
    plan.before = *text;
  } else if (text.status().errno_value() != ENOENT) {
    return text.status().with_context("reading " + plan.path);
  }
  if (!plan.before) {
    plan.after = "# Written by interpreter: destinations you allowed always. Sessions in this workspace use this "
                 "policy\n# while it is what interpreter wrote (an edit elsewhere makes it unused until you choose "
                 "it: --policy).\nversion: 1\nextends: " + extends + "\nnetwork:\n  allow:\n    - " + rule + "\n";
    return plan;
  }
  auto edited = with_allow_rule(*plan.before, rule);
  if (!edited) return Status::error(plan.path + ": " + edited.status().message() + by_hand);
  plan.after = std::move(edited).value();
  return plan;
}

Status carry_out(const KeepContext& context, const KeepPlan& plan) {
  if (plan.unchanged()) return Status::ok();
  size_t slash = plan.path.rfind('/');
  OI_TRY(make_dirs(plan.path.substr(0, slash), 0755));
  OI_TRY(write_file_atomic(plan.path, plan.after, 0644));
  if (plan.workspace_policy) {
    OI_TRY(make_dirs(context.state_dir + "/workspace-policies", 0700));
    OI_TRY(write_file_atomic(copy_path(context, plan.path), plan.after, 0600));
  }
  return Status::ok();
}

Result<std::optional<std::string>> trusted_workspace_policy(const KeepContext& context) {
  const std::string path = real_or_same(context.workspace) + "/" + kWorkspacePolicy;
  auto text = read_file(path, 1 << 20);
  if (!text) {
    if (text.status().errno_value() == ENOENT) return std::optional<std::string>();
    return text.status().with_context("the workspace policy " + path);
  }
  auto copy = read_file(copy_path(context, path), 1 << 20);
  if (!copy || *copy != *text) {
    return Status::error("the workspace policy " + path + " is not what interpreter wrote there (it was changed or "
                         "made elsewhere: by you, or by code in a sandbox, which can write the workspace), so it is "
                         "not used. Read it, and start with --policy " + path + " to use it.");
  }
  return std::optional<std::string>(path);
}

std::string describe_plan(const KeepPlan& plan) {
  FileChange change;
  change.kind = plan.before ? FileChange::Kind::modified : FileChange::Kind::created;
  change.path = plan.path;
  change.old_text = plan.before;
  change.new_text = plan.after;
  change.old_size = plan.before ? plan.before->size() : 0;
  change.new_size = plan.after.size();
  return unified_diff(change);
}

}  // namespace oishell::agent
