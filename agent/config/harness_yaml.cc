#include "agent/config/harness_yaml.h"

#include <set>

#include "agent/config/yaml_json.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

bool valid_tool_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

Result<HarnessTool> parse_tool(const YAML::Node& node, const std::string& where) {
  if (!node.IsMap()) return Status::error(where + ": expected a mapping");
  static const std::set<std::string> kKeys = {"name", "description", "parameters", "shell", "argv", "python"};
  for (const auto& kv : node) {
    if (!kv.first.IsScalar() || !kKeys.count(kv.first.Scalar())) {
      return Status::error(where + ": unknown key `" + (kv.first.IsScalar() ? kv.first.Scalar() : "?") +
                           "` (expected name, description, parameters, and one of shell, argv, python)");
    }
  }
  HarnessTool tool;
  if (!node["name"] || !node["name"].IsScalar() || !valid_tool_name(node["name"].Scalar())) {
    return Status::error(where + ".name: a name of letters, digits, _ and - (at most 64)");
  }
  tool.name = node["name"].Scalar();
  if (tool.name == "execute" || tool.name == "computer") {
    return Status::error(where + ".name: `" + tool.name + "` is the agent's own tool");
  }
  if (node["description"]) {
    if (!node["description"].IsScalar()) return Status::error(where + ".description: expected text");
    tool.description = node["description"].Scalar();
  }
  tool.parameters = node["parameters"] ? yaml_to_json(node["parameters"]) : json{{"type", "object"}, {"properties", json::object()}};
  if (!tool.parameters.is_object() || tool.parameters.value("type", "object") != "object") {
    return Status::error(where + ".parameters: expected a JSON schema of type object");
  }
  tool.parameters["type"] = "object";
  int runs = 0;
  for (const char* key : {"shell", "argv", "python"}) {
    if (!node[key]) continue;
    ++runs;
    if (!node[key].IsScalar() || node[key].Scalar().empty()) return Status::error(where + "." + key + ": expected text");
    const std::string value = node[key].Scalar();
    if (std::string(key) == "python") {
      tool.run = HarnessTool::Run::python;
      tool.code = value;
      continue;
    }
    tool.run = std::string(key) == "shell" ? HarnessTool::Run::shell : HarnessTool::Run::argv;
    tool.argument = value;
    const json& properties = tool.parameters.contains("properties") ? tool.parameters["properties"] : json::object();
    const char* type = tool.run == HarnessTool::Run::shell ? "string" : "array";
    if (!properties.contains(value) || properties[value].value("type", "") != type) {
      return Status::error(where + "." + key + ": `" + value + "` must be a parameter of type " + type);
    }
    auto& required = tool.parameters["required"];
    if (!required.is_array()) required = json::array();
    if (std::find(required.begin(), required.end(), value) == required.end()) required.push_back(value);
  }
  if (runs != 1) return Status::error(where + ": give exactly one of shell, argv and python (how the tool runs)");
  return tool;
}

}  // namespace

Result<Harness> parse_harness(const YAML::Node& node) {
  if (node.IsScalar()) {
    if (auto builtin = builtin_harness(node.Scalar())) return *builtin;
    std::string names;
    for (const auto& n : builtin_harness_names()) names += (names.empty() ? "" : ", ") + n;
    return Status::error("harness: `" + node.Scalar() + "` is not a built-in harness (" + names +
                         "); a mapping defines one");
  }
  if (!node.IsMap()) return Status::error("harness: expected a name or a mapping");
  static const std::set<std::string> kKeys = {"extends", "name", "prompt", "execute", "tools"};
  for (const auto& kv : node) {
    if (!kv.first.IsScalar() || !kKeys.count(kv.first.Scalar())) {
      return Status::error("harness: unknown key `" + (kv.first.IsScalar() ? kv.first.Scalar() : "?") +
                           "` (expected extends, name, prompt, execute, tools)");
    }
  }
  Harness harness;
  harness.execute_tool = true;  // a harness of one's own keeps execute unless it says otherwise
  if (node["extends"]) {
    auto base = builtin_harness(node["extends"].IsScalar() ? node["extends"].Scalar() : "");
    if (!base) return Status::error("harness.extends: expected the name of a built-in harness");
    harness = *base;
  }
  if (node["name"]) {
    if (!node["name"].IsScalar()) return Status::error("harness.name: expected text");
    harness.name = node["name"].Scalar();
  }
  if (harness.name.empty()) harness.name = "custom";
  if (node["prompt"]) {
    if (!node["prompt"].IsScalar()) return Status::error("harness.prompt: expected text");
    harness.prompt = node["prompt"].Scalar();
  }
  if (node["execute"]) {
    bool execute = false;
    if (!YAML::convert<bool>::decode(node["execute"], execute)) return Status::error("harness.execute: true or false");
    harness.execute_tool = execute;
  }
  if (node["tools"]) {
    if (!node["tools"].IsSequence()) return Status::error("harness.tools: expected a list");
    size_t i = 0;
    for (const auto& item : node["tools"]) {
      auto tool = parse_tool(item, "harness.tools[" + std::to_string(i++) + "]");
      if (!tool) return tool.status();
      auto same = std::find_if(harness.tools.begin(), harness.tools.end(),
                               [&](const HarnessTool& t) { return t.name == tool->name; });
      if (same != harness.tools.end()) *same = std::move(*tool);
      else harness.tools.push_back(std::move(*tool));
    }
  }
  if (harness.tools.empty() && !harness.execute_tool) {
    return Status::error("harness: no tools and no execute: the model could do nothing");
  }
  return harness;
}

}  // namespace oishell::agent
