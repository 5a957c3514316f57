#pragma once
// YAML to JSON, for manifests and schemas written in YAML (a profile's harness tools, a pod template): plain scalars
// that read as a boolean or a number become one (YAML 1.2's core schema); quoted scalars stay strings.
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

namespace oishell::agent {

nlohmann::json yaml_to_json(const YAML::Node& node);

}  // namespace oishell::agent
