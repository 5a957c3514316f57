// `oishell completion bash|zsh|fish`: the shell completion script, generated from the command table and the option
// table each verb's parser reads (command.h), so it offers exactly what the parsers accept. The package installs
// its output (packaging/CMakeLists.txt); `source <(oishell completion bash)` loads it by hand.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tools/completion/completion.h"
#include "tools/oishell/command.h"

namespace oishell::cli {
namespace {

using completion::Option;
using completion::Value;

constexpr char kUsage[] =
    "usage: oishell completion bash|zsh|fish\n"
    "Prints the completion script for the shell, generated from the options the commands accept.\n"
    "  bash: source <(oishell completion bash)      (installed: /usr/share/bash-completion/completions/oishell)\n"
    "  zsh:  source <(oishell completion zsh)       (installed: /usr/share/zsh/vendor-completions/_oishell)\n"
    "  fish: oishell completion fish | source       (installed: /usr/share/fish/vendor_completions.d/oishell.fish)\n";

completion::Program oishell_program() {
  completion::Program program;
  program.name = "oishell";
  program.generator = "oishell completion";
  program.options = global_options();
  auto verbs = commands();
  std::sort(verbs.begin(), verbs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const auto& verb : verbs) {
    completion::Command c{verb.name, verb.summary, verb.options ? verb.options() : std::vector<Option>{},
                          verb.operands};
    program.commands.push_back(std::move(c));
  }
  return program;
}

int run_completion(int argc, char** argv) {
  if (argc > 1 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  auto shell = argc == 2 ? completion::shell_named(argv[1]) : std::nullopt;
  if (!shell) {
    std::fprintf(stderr, "oishell completion: name one shell: %s\n%s", completion::kShellNames, kUsage);
    return kExitUsage;
  }
  std::fputs(completion::render(oishell_program(), *shell).c_str(), stdout);
  return kExitOk;
}

const Registration kRegistration{{"completion", "print the shell completion script (bash, zsh or fish)",
                                  &run_completion, nullptr,
                                  {Value::choice, "shell", {"bash", "zsh", "fish"}, false}}};

}  // namespace
}  // namespace oishell::cli
