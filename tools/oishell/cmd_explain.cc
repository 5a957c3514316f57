// `oishell explain FILE | --profile NAME`: what the sandbox can and cannot do, in plain sentences (files, network,
// processes, limits, environment), with `extends` resolved and compiled against this host, and which layers hold
// each of its guarantees on this machine. With --path P: which part of the policy decides P (docs/policy.md,
// "Why a path was refused").
#include <algorithm>
#include <cstdio>

#include "policy/compiler.h"
#include "policy/explain.h"
#include "policy/path_verdict.h"
#include "runtime/outside/layer_facts.h"
#include "tools/oishell/command.h"
#include "tools/oishell/policy_cli.h"

namespace oishell::cli {
namespace {

constexpr char kUsage[] =
    "usage: oishell explain [FILE | --profile NAME] [--path PATH [--write]]\n"
    "Says what a sandbox under this policy can and cannot do, here (current directory as workspace).\n"
    "With --path: which part of the policy decides PATH (as the sandbox sees it), for reading or, with --write,\n"
    "writing, and what would allow it. Exit status 0 when allowed, 1 when the sandbox refuses it.\n";

// What the parser reads and `oishell completion` offers.
const std::vector<completion::Option>& options() {
  static const std::vector<completion::Option> options = policy_verb_options(
      {{{"--path"}, completion::Value::file, "PATH", "which part of the policy decides this path", {}, true},
       {{"--write"}, completion::Value::none, "", "with --path: for writing (default: reading)", {}, false}});
  return options;
}

int run_explain(int argc, char** argv) {
  std::vector<std::string> seen;
  bool help = false;
  std::vector<std::pair<std::string, std::string>> values;
  auto args = parse_policy_args(argc, argv, options(), seen, kUsage, &help, &values);
  if (!args) return help ? kExitOk : kExitUsage;
  if (args->size() > 1) {
    std::fprintf(stderr, "oishell explain: one policy at a time\n%s", kUsage);
    return kExitUsage;
  }
  PolicyArg arg = args->empty() ? PolicyArg{{"", "default"}} : args->front();
  auto policy = load_or_report(arg, "explain");
  if (!policy) return kExitFailure;
  const CompileContext context = CompileContext::from_process();
  auto spec = policy::compile(*policy, context);
  if (!spec) {
    std::fprintf(stderr, "oishell explain: %s does not compile here:\n%s\n", arg.label().c_str(),
                 spec.status().message().c_str());
    return kExitFailure;
  }
  if (!values.empty()) {
    const auto access = std::find(seen.begin(), seen.end(), "--write") != seen.end() ? policy::PathAccess::write
                                                                                      : policy::PathAccess::read;
    bool denied = false;
    for (const auto& [name, path] : values) {
      const policy::PathVerdict verdict = policy::explain_path(*policy, context, *spec, path, access);
      denied = denied || verdict.denied;
      std::printf("%s\n", policy::describe(verdict).c_str());
    }
    return denied ? kExitFailure : kExitOk;
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
