// `oishell schema`: the JSON Schema of the policy format, for editors (e.g. VS Code's YAML extension:
// "yaml.schemas": {"/path/to/oishell-policy.schema.json": "*.oishell.yaml"}).
#include <cstdio>
#include <cstring>

#include "policy/schema.h"
#include "tools/oishell/command.h"

namespace oishell::cli {
namespace {

int run_schema(int argc, char** argv) {
  if (argc > 1 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    std::printf("usage: oishell schema > oishell-policy.schema.json\nPrints the JSON Schema of the policy format.\n");
    return kExitOk;
  }
  if (argc > 1) {
    std::fprintf(stderr, "oishell schema: takes no arguments\n");
    return kExitUsage;
  }
  std::printf("%s\n", policy::policy_schema().dump(2).c_str());
  return kExitOk;
}

const Registration kRegistration{{"schema", "print the JSON Schema of the policy format", &run_schema}};

}  // namespace
}  // namespace oishell::cli
