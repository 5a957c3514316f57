#include "agent/kubernetes/kube_pod.h"

#include <yaml-cpp/yaml.h>

#include <random>

namespace oishell::agent {
namespace {

using nlohmann::json;

json to_json(const YAML::Node& node) {
  if (node.IsMap()) {
    json out = json::object();
    for (const auto& kv : node) out[kv.first.as<std::string>()] = to_json(kv.second);
    return out;
  }
  if (node.IsSequence()) {
    json out = json::array();
    for (const auto& item : node) out.push_back(to_json(item));
    return out;
  }
  if (node.IsNull()) return nullptr;
  const std::string& text = node.Scalar();
  if (node.Tag() != "!") {  // plain scalars: booleans and numbers as YAML 1.2's core schema reads them
    if (text == "true" || text == "false") return text == "true";
    if (!text.empty() && text.find_first_not_of("0123456789-") == std::string::npos && text != "-") {
      try {
        return std::stoll(text);
      } catch (...) {
      }
    }
  }
  return text;
}

}  // namespace

std::string supervisor_container(const json& pod) {
  for (const auto& c : pod["spec"]["containers"]) {
    const json command = c.value("command", json::array());
    if (command.size() >= 2 && command[1] == "supervise") return c.value("name", "");
  }
  return "";
}

std::string session_pod_name() {
  std::random_device random;
  static const char kHex[] = "0123456789abcdef";
  std::string name = "oishell-session-";
  for (int i = 0; i < 10; ++i) name += kHex[random() % 16];
  return name;
}

Result<json> session_pod(const std::string& template_text, const std::string& name,
                         const std::vector<std::string>& supervise_args) {
  json pod;
  try {
    pod = to_json(YAML::Load(template_text));
  } catch (const YAML::Exception& e) {
    return Status::error(std::string("the pod template is not YAML or JSON: ") + e.what());
  }
  if (!pod.is_object() || pod.value("kind", "") != "Pod" || !pod.contains("spec") || !pod["spec"].is_object()) {
    return Status::error("the pod template is not a Pod manifest (kind: Pod with a spec)");
  }
  json& spec = pod["spec"];
  if (!spec.contains("containers") || !spec["containers"].is_array() || spec["containers"].empty()) {
    return Status::error("the pod template has no container");
  }
  json* supervisor = &spec["containers"][0];
  for (auto& c : spec["containers"]) {
    if (c.value("name", "") == "supervisor") supervisor = &c;
  }
  json command = json::array({"oishell", "supervise"});
  for (const auto& a : supervise_args) command.push_back(a);
  (*supervisor)["command"] = command;
  supervisor->erase("args");
  (*supervisor)["stdin"] = true;
  (*supervisor)["stdinOnce"] = true;
  (*supervisor)["tty"] = false;
  pod["metadata"]["name"] = name;
  pod["metadata"].erase("generateName");
  pod["metadata"]["labels"]["oishell.dev/session"] = name;
  if (!spec.contains("activeDeadlineSeconds")) spec["activeDeadlineSeconds"] = kSessionDeadlineSeconds;
  spec["restartPolicy"] = "Never";  // a session that ends stays ended
  return pod;
}

}  // namespace oishell::agent
