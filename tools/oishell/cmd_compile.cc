// `oishell compile FILE | --profile NAME [--json]`: the compiled SandboxSpec, as stable JSON (golden files,
// reviews, diffs). Compiled against this host: the current directory, $HOME, $TMPDIR, the environment.
#include <cstdio>

#include "policy/spec_json.h"
#include "tools/oishell/command.h"
#include "tools/oishell/policy_cli.h"

namespace oishell::cli {
namespace {

constexpr char kUsage[] =
    "usage: oishell compile FILE | --profile NAME [--json]\n"
    "Prints the sandbox the policy compiles to on this host (mount plan, Landlock rules, seccomp sets, network\n"
    "rules, limits, environment) as JSON. Exit 0 when it compiles, 1 when it does not, 2 on a usage error.\n";

// What the parser reads and `oishell completion` offers.
const std::vector<completion::Option>& options() {
  static const std::vector<completion::Option> options =
      policy_verb_options({{{"--json"}, completion::Value::none, "", "print JSON (the default; kept for scripts)", {}}});
  return options;
}

int run_compile(int argc, char** argv) {
  std::vector<std::string> seen;
  bool help = false;
  auto args = parse_policy_args(argc, argv, options(), seen, kUsage, &help);
  if (!args) return help ? kExitOk : kExitUsage;
  if (args->size() > 1) {
    std::fprintf(stderr, "oishell compile: one policy at a time\n%s", kUsage);
    return kExitUsage;
  }
  PolicyArg arg = args->empty() ? PolicyArg{{"", "default"}} : args->front();
  auto spec = compile_or_report(arg, "compile");
  if (!spec) return kExitFailure;
  std::printf("%s\n", spec_to_json(*spec).dump(2).c_str());
  return kExitOk;
}

const Registration kRegistration{{"compile", "print the sandbox a policy compiles to, as JSON", &run_compile,
                                   &options, {completion::Value::file, "policy file", {}, false}}};

}  // namespace
}  // namespace oishell::cli
