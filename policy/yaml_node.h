#pragma once
// A loaded YAML document as policy/ reads it: null, scalar, sequence or mapping, each with its position. Built by
// policy/yaml_safe.cc from the parser's events in the same pass that bounds them; anchors are ignored and
// aliases refused there, so the tree is exactly as large as the text.
#include <string>
#include <vector>

namespace oishell::policy {

struct YamlNode {
  enum class Kind { null, scalar, sequence, map };
  Kind kind = Kind::null;
  std::string value;              // the scalar's text
  std::vector<YamlNode> children;  // a sequence's items; a mapping's keys and values, alternating
  int line = -1;                  // 0-based, as the parser marks them; -1 when unknown (an empty document)
  int column = -1;

  bool is_null() const { return kind == Kind::null; }
  bool is_scalar() const { return kind == Kind::scalar; }
  bool is_sequence() const { return kind == Kind::sequence; }
  bool is_map() const { return kind == Kind::map; }
};

}  // namespace oishell::policy
