#pragma once
// Shared by the policy authoring verbs (validate, explain, compile, diff): "FILE | --profile NAME" arguments and
// loading + compiling with messages on stderr.
#include <optional>
#include <string>
#include <vector>

#include "policy/compile.h"
#include "policy/load.h"
#include "tools/completion/completion.h"

namespace oishell::cli {

// One policy named on the command line: "--profile NAME", "--profile=NAME", "profile:NAME" or a file path.
struct PolicyArg {
  PolicySource source;
  std::string label() const { return source.file.empty() ? "profile " + source.profile : source.file; }
};

// The options of an authoring verb: --profile NAME (-p), then the verb's own switches (`switches`, e.g. --json).
std::vector<completion::Option> policy_verb_options(std::vector<completion::Option> switches = {});

// Parses `args` against `options` (from policy_verb_options): the switches given are returned in `seen` by their
// canonical name, the values of a verb's options that take one (`--path P`, `--path=P`) in `values` by canonical
// name (an option that takes a value is a usage error when `values` is null); policies in order. Returns nullopt
// after printing usage: on --help (then *help is set) or on a usage error.
std::optional<std::vector<PolicyArg>> parse_policy_args(int argc, char** argv,
                                                        const std::vector<completion::Option>& options,
                                                        std::vector<std::string>& seen, const char* usage,
                                                        bool* help = nullptr,
                                                        std::vector<std::pair<std::string, std::string>>* values =
                                                            nullptr);

// Load and compile with the process's context; errors printed to stderr prefixed with `verb`.
std::optional<SandboxSpec> compile_or_report(const PolicyArg& arg, const char* verb);
std::optional<policy::Policy> load_or_report(const PolicyArg& arg, const char* verb);

}  // namespace oishell::cli
