#pragma once
// Internal to policy/parse*.cc: typed reads from a loaded YAML tree (policy/yaml_node.h) that record a Diagnostic
// (file, line, column, key path, hint) instead of failing, so one pass reports every error in a file.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "policy/policy.h"
#include "policy/yaml_node.h"

namespace oishell::policy::detail {

// Entries and items refer into the tree, which outlives the reads.
using NodeRef = std::reference_wrapper<const YamlNode>;

class NodeReader {
 public:
  NodeReader(std::string file, std::vector<Diagnostic>& errors) : file_(std::move(file)), errors_(errors) {}

  const std::string& file() const { return file_; }
  SourcePos pos(const YamlNode& node) const;
  void error(const YamlNode& node, const std::string& key_path, std::string message, std::string hint = {});

  // The entries of a mapping, in order, after reporting unknown keys (with a suggestion), duplicate keys and
  // non-string keys. Null counts as an empty mapping. Empty when `node` is not a mapping (reported).
  std::vector<std::pair<std::string, NodeRef>> map_entries(const YamlNode& node, const std::string& key_path,
                                                              const std::vector<std::string>& known_keys);
  // Like map_entries without a fixed key set (e.g. env.set, network.hosts).
  std::vector<std::pair<std::string, NodeRef>> free_map_entries(const YamlNode& node, const std::string& key_path);
  // The items of a sequence; null counts as empty; anything else is reported.
  std::vector<NodeRef> sequence_items(const YamlNode& node, const std::string& key_path);

  std::optional<std::string> string(const YamlNode& node, const std::string& key_path);
  std::optional<bool> boolean(const YamlNode& node, const std::string& key_path);
  std::optional<uint64_t> integer(const YamlNode& node, const std::string& key_path, uint64_t min, uint64_t max);
  // One of `choices`, with a suggestion when misspelt.
  std::optional<std::string> choice(const YamlNode& node, const std::string& key_path,
                                    const std::vector<std::string>& choices);

  static std::string item_path(const std::string& key_path, size_t index) {
    return key_path + "[" + std::to_string(index) + "]";
  }
  static std::string child_path(const std::string& key_path, const std::string& key) {
    return key_path.empty() ? key : key_path + "." + key;
  }

 private:
  struct Entry {
    std::string name;
    const YamlNode* key;
    const YamlNode* value;
  };
  std::vector<Entry> entries(const YamlNode& node, const std::string& key_path);

  static constexpr size_t kMaxErrors = 100;
  std::string file_;
  std::vector<Diagnostic>& errors_;
  size_t reported_ = 0;
};

// Human name of a node's type for messages: "a list", "a mapping", "a string", "nothing".
std::string node_kind(const YamlNode& node);

}  // namespace oishell::policy::detail
