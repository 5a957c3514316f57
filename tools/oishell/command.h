#pragma once
// The `oishell` command table. Each verb lives in its own cmd_<verb>.cc and registers itself:
//   static const oishell::cli::Registration reg{{"validate", "check policy files", &run_validate, &options, operands}};
// A verb receives the arguments after its name (argv[0] is the verb) and returns the process exit status.
// Its options are a table (tools/completion/completion.h) that its parser reads, to know which options exist and
// which take a value, and from which `oishell completion` generates the shell completions.
#include <string>
#include <vector>

#include "tools/completion/completion.h"

namespace oishell::cli {

// Exit statuses shared by the verbs.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;         // validate: invalid; doctor: default profile not enforceable in full
inline constexpr int kExitUsage = 2;
inline constexpr int kExitPolicyInvalid = 125; // run/supervise: the policy did not validate or compile
inline constexpr int kExitSandboxFailed = 126; // run/supervise: the sandbox could not be built (reason on stderr)
// 127: command not found inside the sandbox; otherwise the command's status, 128+N for signal N.

struct Command {
  std::string name;
  std::string summary;  // one line for `oishell --help`
  int (*run)(int argc, char** argv);
  // The options the verb's parser reads, besides -h/--help which every verb takes. A function, so that the table
  // is built when the verb parses its arguments or `oishell completion` runs, not at every start-up.
  const std::vector<completion::Option>& (*options)() = nullptr;
  completion::Operands operands = {};
};

struct Registration {
  explicit Registration(Command command);
};

const std::vector<Command>& commands();

// The options before the verb (--help, --version), as main() reads them.
const std::vector<completion::Option>& global_options();

}  // namespace oishell::cli
