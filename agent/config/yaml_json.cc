#include "agent/config/yaml_json.h"

namespace oishell::agent {

nlohmann::json yaml_to_json(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& kv : node) out[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return out;
  }
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : node) out.push_back(yaml_to_json(item));
    return out;
  }
  if (node.IsNull()) return nullptr;
  const std::string& text = node.Scalar();
  if (node.Tag() != "!") {
    if (text == "true" || text == "false") return text == "true";
    long long integer;
    if (YAML::convert<long long>::decode(node, integer)) return integer;
    double number;
    if (text.find_first_of("0123456789") != std::string::npos && YAML::convert<double>::decode(node, number)) {
      return number;
    }
  }
  return text;
}

}  // namespace oishell::agent
