#pragma once
// Loading untrusted YAML (or JSON, which is YAML) without trusting it: a size cap, then one pass over libyaml's
// parser events that refuses aliases (an anchor/alias "billion laughs" would expand when the tree is walked), more
// than one document, nesting deeper than kMaxDepth and more than kMaxNodes nodes, and builds the tree
// (policy/yaml_node.h) as it goes: the limits stop the parser before it reads or allocates past them. Every
// failure is a Diagnostic with the position libyaml reports.
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"
#include "policy/yaml_node.h"

namespace oishell::policy {

inline constexpr size_t kMaxPolicyBytes = 1 << 20;
inline constexpr int kMaxDepth = 32;
inline constexpr size_t kMaxNodes = 50000;

struct YamlDocument {
  YamlNode root;                          // null when the text failed to load
  std::vector<Diagnostic> errors;
};

// `file` names the text in diagnostics.
YamlDocument load_yaml(std::string_view text, const std::string& file);

// Reads a whole file with the size cap; the error names the file and the call. Unless `allow_special` (a file the
// user named on the command line, which may be a pipe), only a regular file is read, so an `extends:` naming a FIFO
// or a device cannot hang or flood the loader.
YamlDocument load_yaml_file(const std::string& path, bool allow_special = false);

// 1-based position of a node.
SourcePos pos_of(const YamlNode& node, const std::string& file);

}  // namespace oishell::policy
