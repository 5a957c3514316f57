#pragma once
// The policy flags shared by `oishell run` and `oishell supervise`: where the policy comes from and the
// overrides that add to it (--policy, --profile, --workspace, --ro, --rw, --allow-domain, --allow-udp, --net, --env,
// --timeout, --memory, --allow-home-workspace), and reading an option against a verb's option table.
#include <functional>
#include <string>
#include <vector>

#include "policy/compile.h"
#include "tools/completion/completion.h"

namespace oishell::cli {

// The policy flags, as the parsers and `oishell completion` read them.
const std::vector<completion::Option>& policy_flag_options();

// Reads the option at argv[*i] (`--flag`, `--flag=value` or `--flag value`) against `options`. Returns "" with
// *option set and, for an option that takes a value, *value (advancing *i past a separate value); otherwise the
// usage error: an option not in `options`, a value missing, or a value given to a switch.
std::string read_option(int argc, char** argv, int* i, const std::vector<completion::Option>& options,
                        const completion::Option** option, std::string* value);

// Applies the policy flag whose canonical name is `flag` (with `value`, empty for a switch); returns false when
// `flag` is not one of them.
bool apply_policy_flag(const std::string& flag, const std::string& value, PolicySource* source,
                       PolicyOverrides* overrides);

// The command line of a verb that runs a command (`run`, `learn`): options from `options` (the policy flags applied
// to *source and *overrides, any other given to `other`, which returns "" or the usage error), then the command
// after `--` or at the first word that is not an option. Returns "" or the usage error; *help for -h/--help.
using OtherFlag = std::function<std::string(const std::string& flag, const std::string& value)>;
std::string parse_command_args(int argc, char** argv, const std::vector<completion::Option>& options,
                               PolicySource* source, PolicyOverrides* overrides, const OtherFlag& other,
                               std::vector<std::string>* command, bool* help);

}  // namespace oishell::cli
