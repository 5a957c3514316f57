// The policy loader on untrusted text (a policy file a repository ships, `--policy FILE`): YAML loaded under the
// safety limits (policy/yaml_safe.h), parsed and validated (policy/parse.h, policy/load.h), and, when valid,
// compiled against a fixed fake host and explained (policy/compiler.h, policy/explain.h).
#include "tests/fuzz/policy_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::load_and_compile_policy(data, size, "fuzz.yaml");
  return 0;
}
