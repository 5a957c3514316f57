#pragma once
// Python profiles (Open Interpreter's .py profiles set attributes on `interpreter`: `interpreter.llm.model = "..."`,
// `interpreter.auto_run = True`). Their settings are read by running them in the sandbox, never on the host: a copy
// of the profile in a fresh read-only workspace, run by `oishell run` with the strict policy profile, no network,
// a 10 s wall-clock limit and 256 MiB of memory, in a python3 whose `interpreter` module is a stub that records
// every attribute assignment (nested: `interpreter.llm.*`, `interpreter.computer.*`) and method call, and prints
// them as JSON. The settings are then checked and applied as a YAML profile's keys are (agent/config/profile.h).
//
// When the sandbox cannot start, the profile is refused, and the message carries the YAML that would do the same
// (the assignments of plain values read from the text without running it).
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "agent/llm/provider.h"
#include "agent/config/profile.h"
#include "base/status.h"

namespace oishell::agent {

// The python program run in the sandbox: argv[1] is the profile. Its last line of output is
// `OISHELL-PROFILE {"settings": {...}, "calls": [...], "errors": [...]}`.
const char* python_profile_runner();

// Reads the runner's output into a profile (checked like YAML). `path` names the profile in messages.
Result<Profile> profile_from_runner_output(const std::string& output, const std::string& path);

// The assignments of plain values (strings, numbers, True/False/None) to `interpreter.*` at the start of a line,
// as a YAML profile in the dotted style; what could not be converted is listed in comments.
std::string python_profile_as_yaml(const std::string& source);

Result<Profile> read_python_profile(const std::string& path, const EnvLookup& env);

}  // namespace oishell::agent
