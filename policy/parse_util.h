#pragma once
// Internal to policy/parse*.cc: typed reads from a yaml-cpp tree that record a Diagnostic (file, line, column,
// key path, hint) instead of throwing, so one pass reports every error in a file.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "policy/policy.h"

namespace oishell::policy::detail {

class NodeReader {
 public:
  NodeReader(std::string file, std::vector<Diagnostic>& errors) : file_(std::move(file)), errors_(errors) {}

  const std::string& file() const { return file_; }
  SourcePos pos(const YAML::Node& node) const;
  void error(const YAML::Node& node, const std::string& key_path, std::string message, std::string hint = {});

  // The entries of a mapping, in order, after reporting unknown keys (with a suggestion), duplicate keys and
  // non-string keys. Null counts as an empty mapping. Empty when `node` is not a mapping (reported).
  std::vector<std::pair<std::string, YAML::Node>> map_entries(const YAML::Node& node, const std::string& key_path,
                                                              const std::vector<std::string>& known_keys);
  // Like map_entries without a fixed key set (e.g. env.set, network.hosts).
  std::vector<std::pair<std::string, YAML::Node>> free_map_entries(const YAML::Node& node, const std::string& key_path);
  // The items of a sequence; null counts as empty; anything else is reported.
  std::vector<YAML::Node> sequence_items(const YAML::Node& node, const std::string& key_path);

  std::optional<std::string> string(const YAML::Node& node, const std::string& key_path);
  std::optional<bool> boolean(const YAML::Node& node, const std::string& key_path);
  std::optional<uint64_t> integer(const YAML::Node& node, const std::string& key_path, uint64_t min, uint64_t max);
  // One of `choices`, with a suggestion when misspelt.
  std::optional<std::string> choice(const YAML::Node& node, const std::string& key_path,
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
    YAML::Node key;
    YAML::Node value;
  };
  std::vector<Entry> entries(const YAML::Node& node, const std::string& key_path);

  static constexpr size_t kMaxErrors = 100;
  std::string file_;
  std::vector<Diagnostic>& errors_;
  size_t reported_ = 0;
};

// Human name of a node's type for messages: "a list", "a mapping", "a string", "nothing".
std::string node_kind(const YAML::Node& node);

}  // namespace oishell::policy::detail
