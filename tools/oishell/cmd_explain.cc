// `oishell explain FILE | --profile NAME`: what the sandbox can and cannot do, in plain sentences (files, network,
// processes, limits, environment), with `extends` resolved and compiled against this host, and which layers hold
// each of its guarantees on this machine.
#include <cstdio>

#include "policy/compiler.h"
#include "policy/explain.h"
#include "runtime/outside/layer_facts.h"
#include "tools/oishell/command.h"
#include "tools/oishell/policy_cli.h"

namespace oishell::cli {
namespace {

constexpr char kUsage[] =
    "usage: oishell explain FILE | --profile NAME\n"
    "Says what a sandbox under this policy can and cannot do, here (current directory as workspace).\n";

// What the parser reads and `oishell completion` offers.
const std::vector<completion::Option>& options() {
  static const std::vector<completion::Option> options = policy_verb_options();
  return options;
}

int run_explain(int argc, char** argv) {
  std::vector<std::string> seen;
  bool help = false;
  auto args = parse_policy_args(argc, argv, options(), seen, kUsage, &help);
  if (!args) return help ? kExitOk : kExitUsage;
  if (args->size() > 1) {
    std::fprintf(stderr, "oishell explain: one policy at a time\n%s", kUsage);
    return kExitUsage;
  }
  PolicyArg arg = args->empty() ? PolicyArg{{"", "default"}} : args->front();
  auto policy = load_or_report(arg, "explain");
  if (!policy) return kExitFailure;
  auto spec = policy::compile(*policy, CompileContext::from_process());
  if (!spec) {
    std::fprintf(stderr, "oishell explain: %s does not compile here:\n%s\n", arg.label().c_str(),
                 spec.status().message().c_str());
    return kExitFailure;
  }
  // Which layers hold each guarantee on this machine (OISHELL_LANDLOCK_ABI caps Landlock as for a sandbox).
  auto layers = layer_facts();
  if (!layers) {
    std::fprintf(stderr, "oishell explain: %s\n", layers.status().message().c_str());
    return kExitFailure;
  }
  std::printf("%s", policy::explain(*policy, *spec, &*layers).c_str());
  return kExitOk;
}

const Registration kRegistration{{"explain", "say in plain sentences what a policy allows", &run_explain, &options,
                                   {completion::Value::file, "policy file", {}, false}}};

}  // namespace
}  // namespace oishell::cli
