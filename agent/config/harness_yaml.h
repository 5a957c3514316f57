#pragma once
// A profile's `harness:` (agent/config/harness.h): the name of a built-in harness, or a mapping that defines one —
// `extends` (a built-in to start from), `name`, `prompt`, `execute` (also Open Interpreter's execute tool), and
// `tools`: each with `name`, `description`, `parameters` (a JSON schema, in YAML) and how it runs: `shell: ARG` (the
// argument that holds a shell command), `argv: ARG` (an array of words), or `python: CODE` (run with `args`, the
// call's arguments, defined). A tool of the same name as one of the base's replaces it.
#include <yaml-cpp/yaml.h>

#include "agent/config/harness.h"
#include "base/status.h"

namespace oishell::agent {

// The error names the field ("harness.tools[1].parameters: expected a mapping").
Result<Harness> parse_harness(const YAML::Node& node);

}  // namespace oishell::agent
