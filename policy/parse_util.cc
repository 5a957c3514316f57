// NodeReader: see parse_util.h.
#include "policy/parse_util.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "policy/yaml_safe.h"

namespace oishell::policy::detail {

std::string node_kind(const YamlNode& node) {
  switch (node.kind) {
    case YamlNode::Kind::null:
      return "nothing";
    case YamlNode::Kind::scalar:
      return node.value.size() <= 40 ? "`" + node.value + "`" : "`" + node.value.substr(0, 37) + "...`";
    case YamlNode::Kind::sequence:
      return "a list";
    case YamlNode::Kind::map:
      return "a mapping";
  }
  return "an unknown node";
}

SourcePos NodeReader::pos(const YamlNode& node) const { return pos_of(node, file_); }

void NodeReader::error(const YamlNode& node, const std::string& key_path, std::string message, std::string hint) {
  if (reported_ >= kMaxErrors) {
    if (reported_++ == kMaxErrors) {
      errors_.push_back(Diagnostic{pos(node), "", "too many errors; the rest of this file is not reported", ""});
    }
    return;
  }
  ++reported_;
  Diagnostic d;
  d.pos = pos(node);
  d.key_path = key_path;
  d.message = std::move(message);
  d.hint = std::move(hint);
  errors_.push_back(std::move(d));
}

std::vector<NodeReader::Entry> NodeReader::entries(const YamlNode& node, const std::string& key_path) {
  std::vector<Entry> out;
  if (node.is_null()) return out;
  if (!node.is_map()) {
    error(node, key_path, "expected a mapping (key: value), found " + node_kind(node));
    return out;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i + 1 < node.children.size(); i += 2) {
    const YamlNode& key = node.children[i];
    if (!key.is_scalar()) {
      error(key, key_path, "a key must be a string, found " + node_kind(key));
      continue;
    }
    const std::string& name = key.value;
    if (!seen.insert(name).second) {
      error(key, child_path(key_path, name), "duplicate key", "each key may appear once");
      continue;
    }
    out.push_back(Entry{name, &key, &node.children[i + 1]});
  }
  return out;
}

std::vector<std::pair<std::string, NodeRef>> NodeReader::free_map_entries(const YamlNode& node,
                                                                             const std::string& key_path) {
  std::vector<std::pair<std::string, NodeRef>> out;
  for (auto& e : entries(node, key_path)) out.emplace_back(std::move(e.name), *e.value);
  return out;
}

std::vector<std::pair<std::string, NodeRef>> NodeReader::map_entries(const YamlNode& node,
                                                                        const std::string& key_path,
                                                                        const std::vector<std::string>& known_keys) {
  std::vector<std::pair<std::string, NodeRef>> out;
  for (auto& e : entries(node, key_path)) {
    if (std::find(known_keys.begin(), known_keys.end(), e.name) == known_keys.end()) {
      std::string suggestion = did_you_mean(e.name, known_keys);
      std::string hint = suggestion.empty() ? "known keys: " : "did you mean `" + suggestion + "`?";
      if (suggestion.empty()) {
        for (size_t i = 0; i < known_keys.size(); ++i) hint += (i ? ", " : "") + known_keys[i];
      }
      error(*e.key, child_path(key_path, e.name), "unknown key `" + e.name + "`", hint);
      continue;
    }
    out.emplace_back(std::move(e.name), *e.value);
  }
  return out;
}

std::vector<NodeRef> NodeReader::sequence_items(const YamlNode& node, const std::string& key_path) {
  std::vector<NodeRef> out;
  if (node.is_null()) return out;
  if (!node.is_sequence()) {
    std::string hint = node.is_scalar() ? "write [" + node.value + "]" : "";
    error(node, key_path, "expected a list, found " + node_kind(node), hint);
    return out;
  }
  for (const YamlNode& item : node.children) out.push_back(item);
  return out;
}

std::optional<std::string> NodeReader::string(const YamlNode& node, const std::string& key_path) {
  if (!node.is_scalar()) {
    error(node, key_path, "expected a string, found " + node_kind(node));
    return std::nullopt;
  }
  return node.value;
}

std::optional<bool> NodeReader::boolean(const YamlNode& node, const std::string& key_path) {
  if (node.is_scalar()) {
    const std::string& s = node.value;
    if (s == "true") return true;
    if (s == "false") return false;
  }
  error(node, key_path, "expected true or false, found " + node_kind(node));
  return std::nullopt;
}

std::optional<uint64_t> NodeReader::integer(const YamlNode& node, const std::string& key_path, uint64_t min,
                                            uint64_t max) {
  std::string range = "between " + std::to_string(min) + " and " + std::to_string(max);
  if (node.is_scalar()) {
    const std::string& s = node.value;
    uint64_t value = 0;
    bool ok = !s.empty() && s.size() <= 20;
    for (char c : s) {
      if (!ok) break;
      ok = std::isdigit(static_cast<unsigned char>(c)) && !__builtin_mul_overflow(value, 10, &value) &&
           !__builtin_add_overflow(value, c - '0', &value);
    }
    if (ok && value >= min && value <= max) return value;
    if (ok) {
      error(node, key_path, "out of range: " + s, "a whole number " + range);
      return std::nullopt;
    }
  }
  error(node, key_path, "expected a whole number, found " + node_kind(node), "a whole number " + range);
  return std::nullopt;
}

std::optional<std::string> NodeReader::choice(const YamlNode& node, const std::string& key_path,
                                              const std::vector<std::string>& choices) {
  std::string listed;
  for (size_t i = 0; i < choices.size(); ++i) listed += (i ? " | " : "") + choices[i];
  if (node.is_scalar()) {
    const std::string& s = node.value;
    if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
    std::string suggestion = did_you_mean(s, choices);
    error(node, key_path, "unknown value `" + s + "`",
          suggestion.empty() ? "one of " + listed : "did you mean `" + suggestion + "`?");
    return std::nullopt;
  }
  error(node, key_path, "expected one of " + listed + ", found " + node_kind(node));
  return std::nullopt;
}

}  // namespace oishell::policy::detail
