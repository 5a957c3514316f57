#include "agent/kubernetes/kube_pod.h"

#include <yaml-cpp/yaml.h>

#include <random>

#include "agent/config/yaml_json.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

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
    pod = yaml_to_json(YAML::Load(template_text));
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
