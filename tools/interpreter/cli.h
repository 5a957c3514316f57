#pragma once
// The `interpreter` command line, as Open Interpreter users know it (see docs/interpreter.md).
#include <string>

#include "agent/config/config.h"
#include "base/status.h"

namespace oishell::interpreter {

// Parses argv into options. On --help, and on --completion SHELL (the shell's completion script, generated from the
// same CLI11 app), *help_text is set to what to print and the options are empty. Errors name the flag.
Result<agent::CliOptions> parse_cli(int argc, const char* const* argv, std::string* help_text);

}  // namespace oishell::interpreter
