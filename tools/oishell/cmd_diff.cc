// `oishell diff A B`: what B allows that A does not, and the reverse. A and B are files or --profile NAME (or
// profile:NAME), both compiled against this host. Exit 0 when they allow the same, 1 when they differ.
#include <cstdio>

#include "policy/explain.h"
#include "tools/oishell/command.h"
#include "tools/oishell/policy_cli.h"

namespace oishell::cli {
namespace {

constexpr char kUsage[] =
    "usage: oishell diff A B      (each a policy file, --profile NAME or profile:NAME)\n"
    "Lists what B allows that A does not, and what A allows that B does not. Exit 0 when they allow the same,\n"
    "1 when they differ (or one does not compile), 2 on a usage error.\n";

void print_side(const char* title, const std::vector<std::string>& lines) {
  std::printf("%s\n", title);
  if (lines.empty()) std::printf("  nothing\n");
  for (const auto& l : lines) std::printf("  %s\n", l.c_str());
}

// What the parser reads and `oishell completion` offers.
const std::vector<completion::Option>& options() {
  static const std::vector<completion::Option> options = policy_verb_options();
  return options;
}

int run_diff(int argc, char** argv) {
  std::vector<std::string> seen;
  bool help = false;
  auto args = parse_policy_args(argc, argv, options(), seen, kUsage, &help);
  if (!args) return help ? kExitOk : kExitUsage;
  if (args->size() != 2) {
    std::fprintf(stderr, "oishell diff: two policies needed\n%s", kUsage);
    return kExitUsage;
  }
  auto a = compile_or_report((*args)[0], "diff");
  auto b = compile_or_report((*args)[1], "diff");
  if (!a || !b) return kExitFailure;
  policy::SpecDiff d = policy::diff_specs(*a, *b);
  std::string la = (*args)[0].label(), lb = (*args)[1].label();
  if (d.same()) {
    std::printf("%s and %s allow the same.\n", la.c_str(), lb.c_str());
    return kExitOk;
  }
  print_side(("What " + lb + " allows that " + la + " does not:").c_str(), d.only_b);
  print_side(("What " + la + " allows that " + lb + " does not:").c_str(), d.only_a);
  return kExitFailure;
}

const Registration kRegistration{{"diff", "what one policy allows that another does not", &run_diff, &options,
                                   {completion::Value::file, "policy file", {}, true}}};

}  // namespace
}  // namespace oishell::cli
