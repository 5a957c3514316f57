// NodeReader: see parse_util.h.
#include "policy/parse_util.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "policy/yaml_safe.h"

namespace oishell::policy::detail {

std::string node_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return node.Scalar().size() <= 40 ? "`" + node.Scalar() + "`" : "`" + node.Scalar().substr(0, 37) + "...`";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
  }
  return "an unknown node";
}

SourcePos NodeReader::pos(const YAML::Node& node) const { return pos_of(node, file_); }

void NodeReader::error(const YAML::Node& node, const std::string& key_path, std::string message, std::string hint) {
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

std::vector<NodeReader::Entry> NodeReader::entries(const YAML::Node& node, const std::string& key_path) {
  std::vector<Entry> out;
  if (node.IsNull()) return out;
  if (!node.IsMap()) {
    error(node, key_path, "expected a mapping (key: value), found " + node_kind(node));
    return out;
  }
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      error(key, key_path, "a key must be a string, found " + node_kind(key));
      continue;
    }
    std::string name = key.Scalar();
    if (!seen.insert(name).second) {
      error(key, child_path(key_path, name), "duplicate key", "each key may appear once");
      continue;
    }
    out.push_back(Entry{name, key, it->second});
  }
  return out;
}

std::vector<std::pair<std::string, YAML::Node>> NodeReader::free_map_entries(const YAML::Node& node,
                                                                             const std::string& key_path) {
  std::vector<std::pair<std::string, YAML::Node>> out;
  for (auto& e : entries(node, key_path)) out.emplace_back(std::move(e.name), e.value);
  return out;
}

std::vector<std::pair<std::string, YAML::Node>> NodeReader::map_entries(const YAML::Node& node,
                                                                        const std::string& key_path,
                                                                        const std::vector<std::string>& known_keys) {
  std::vector<std::pair<std::string, YAML::Node>> out;
  for (auto& e : entries(node, key_path)) {
    if (std::find(known_keys.begin(), known_keys.end(), e.name) == known_keys.end()) {
      std::string suggestion = did_you_mean(e.name, known_keys);
      std::string hint = suggestion.empty() ? "known keys: " : "did you mean `" + suggestion + "`?";
      if (suggestion.empty()) {
        for (size_t i = 0; i < known_keys.size(); ++i) hint += (i ? ", " : "") + known_keys[i];
      }
      error(e.key, child_path(key_path, e.name), "unknown key `" + e.name + "`", hint);
      continue;
    }
    out.emplace_back(std::move(e.name), e.value);
  }
  return out;
}

std::vector<YAML::Node> NodeReader::sequence_items(const YAML::Node& node, const std::string& key_path) {
  std::vector<YAML::Node> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence()) {
    std::string hint = node.IsScalar() ? "write [" + node.Scalar() + "]" : "";
    error(node, key_path, "expected a list, found " + node_kind(node), hint);
    return out;
  }
  for (auto it = node.begin(); it != node.end(); ++it) out.push_back(*it);
  return out;
}

std::optional<std::string> NodeReader::string(const YAML::Node& node, const std::string& key_path) {
  if (!node.IsScalar()) {
    error(node, key_path, "expected a string, found " + node_kind(node));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<bool> NodeReader::boolean(const YAML::Node& node, const std::string& key_path) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  error(node, key_path, "expected true or false, found " + node_kind(node));
  return std::nullopt;
}

std::optional<uint64_t> NodeReader::integer(const YAML::Node& node, const std::string& key_path, uint64_t min,
                                            uint64_t max) {
  std::string range = "between " + std::to_string(min) + " and " + std::to_string(max);
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
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

std::optional<std::string> NodeReader::choice(const YAML::Node& node, const std::string& key_path,
                                              const std::vector<std::string>& choices) {
  std::string listed;
  for (size_t i = 0; i < choices.size(); ++i) listed += (i ? " | " : "") + choices[i];
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
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
