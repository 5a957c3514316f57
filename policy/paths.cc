// Policy path expansion and normalisation: see paths.h.
#include "policy/paths.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace oishell::policy {
namespace {

Status bad(std::string message, std::string hint = {}) {
  return Status::error(hint.empty() ? message : message + " (" + hint + ")");
}

// Splits a leading variable off `text`; sets `name` ("" when none) and returns the rest.
Result<std::string_view> split_variable(std::string_view text, std::string& name) {
  name.clear();
  if (text == "~" || text.starts_with("~/")) {
    name = "HOME";
    return text.substr(1);
  }
  if (text.starts_with("~")) return bad("`~user` is not supported", "write the absolute path");
  if (!text.starts_with("$")) return text;
  std::string_view rest = text.substr(1);
  size_t len;
  if (rest.starts_with("{")) {
    size_t close = rest.find('}');
    if (close == std::string_view::npos) return bad("unclosed `${`");
    name = std::string(rest.substr(1, close - 1));
    len = close + 1;
  } else {
    len = 0;
    while (len < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[len])) || rest[len] == '_')) ++len;
    name = std::string(rest.substr(0, len));
  }
  if (name != "HOME" && name != "WORKSPACE" && name != "TMPDIR") {
    return bad("unknown variable `$" + name + "`", "the variables are $WORKSPACE, $HOME, $TMPDIR and ~");
  }
  rest = rest.substr(len);
  if (!rest.empty() && rest[0] != '/') return bad("a variable must be followed by `/` or end the path");
  return rest;
}

}  // namespace

std::string normalise_path(std::string_view path) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t end = path.find('/', i);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(i, end - i);
    if (!part.empty() && part != ".") {
      out += '/';
      out += part;
    }
    i = end;
  }
  return out.empty() ? "/" : out;
}

bool path_within(std::string_view path, std::string_view base) {
  if (base == "/") return true;
  if (!path.starts_with(base)) return false;
  return path.size() == base.size() || path[base.size()] == '/';
}

size_t path_depth(std::string_view path) {
  return path == "/" ? 0 : static_cast<size_t>(std::count(path.begin(), path.end(), '/'));
}

Result<std::string> expand_path(std::string_view text, PathRole role, const PathVars& vars) {
  if (text.empty()) return bad("empty path");
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return bad("control character in path");
  }
  if (text.find('$', 1) != std::string_view::npos) {
    return bad("a variable may only start a path", "write $HOME/x, not /x/$HOME");
  }
  std::string variable;
  auto rest = split_variable(text, variable);
  if (!rest) return rest.status();
  std::string expanded;
  if (!variable.empty()) {
    if (variable == "WORKSPACE" && role == PathRole::workspace) {
      return bad("the workspace cannot be defined by $WORKSPACE");
    }
    const std::string& value = variable == "HOME" ? vars.home : variable == "WORKSPACE" ? vars.workspace : vars.tmpdir;
    if (value.empty() || value[0] != '/') return bad("$" + variable + " is not set to an absolute path here");
    expanded = value + std::string(*rest);
  } else {
    expanded = std::string(text);
  }
  // `..` is refused wherever it appears (also inside a variable's value, which would be a host oddity).
  for (size_t i = 0; i <= expanded.size();) {
    size_t end = expanded.find('/', i);
    if (end == std::string::npos) end = expanded.size();
    if (expanded.compare(i, end - i, "..") == 0) {
      return bad("`..` is not allowed in policy paths", "write the path without `..`");
    }
    i = end + 1;
  }
  bool absolute = expanded[0] == '/';
  switch (role) {
    case PathRole::workspace:
      if (!absolute) {
        if (vars.cwd.empty() || vars.cwd[0] != '/') return bad("relative workspace but no current directory");
        expanded = vars.cwd + "/" + expanded;
      }
      break;
    case PathRole::absolute:
      if (!absolute) {
        return bad("relative path where an absolute one is needed",
                   "write $WORKSPACE/" + std::string(text) + " for a path in the workspace, or an absolute path");
      }
      if (normalise_path(expanded) == "/") return bad("`/` would expose the whole host", "list the directories needed");
      break;
    case PathRole::workspace_relative:
      if (variable.empty() && absolute) {
        return bad("an absolute path where one relative to the workspace is needed",
                   "protect entries are relative to the workspace, like .git/hooks");
      }
      if (!variable.empty() && variable != "WORKSPACE") {
        return bad("protect entries are relative to the workspace", "write .git/hooks or $WORKSPACE/.git/hooks");
      }
      if (variable.empty()) {
        if (vars.workspace.empty()) return bad("no workspace to resolve against");
        expanded = vars.workspace + "/" + expanded;
      }
      break;
  }
  return normalise_path(expanded);
}

Status check_path_syntax(std::string_view text, PathRole role) {
  static const PathVars kPlaceholders{"/cwd", "/workspace", "/home", "/tmp"};
  auto r = expand_path(text, role, kPlaceholders);
  if (!r) return r.status();
  return Status::ok();
}

}  // namespace oishell::policy
