#pragma once
// Python profiles (Open Interpreter's .py profiles set attributes on `interpreter`: `interpreter.llm.model = "..."`,
// `interpreter.auto_run = True`). Their settings are read by running them in the sandbox, never on the host: a copy
// of the profile in a fresh read-only workspace, run by `oishell run` with the strict policy profile, no network,
// a 10 s wall-clock limit and 256 MiB of memory, in a python3 whose `interpreter` module is a stub that records
// every attribute assignment (nested: `interpreter.llm.*`, `interpreter.computer.*`) and method call, and prints
// them as JSON. This file turns a .py into those settings and stops there: agent/config/profile.h checks and applies
// them as a YAML profile's keys (loading flows one way: find the file, read it here or as YAML, make the profile).
//
// When the sandbox cannot start, the profile is refused, and the message carries the YAML that would do the same
// (the assignments of plain values read from the text without running it).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace oishell::agent {

// The python program run in the sandbox: argv[1] is the profile. Its last line of output is
// `OISHELL-PROFILE {"settings": {...}, "calls": [...], "errors": [...]}`.
const char* python_profile_runner();

// What a Python profile set: its settings (as a YAML profile's keys, dotted) and notes for the user (methods it
// called that have no effect here).
struct PythonProfileSettings {
  nlohmann::json settings = nlohmann::json::object();
  std::vector<std::string> notes;
};

// Reads the runner's output. `path` names the profile in messages.
Result<PythonProfileSettings> settings_from_runner_output(const std::string& output, const std::string& path);

// The assignments of plain values (strings, numbers, True/False/None) to `interpreter.*` at the start of a line,
// as a YAML profile in the dotted style; what could not be converted is listed in comments.
std::string python_profile_as_yaml(const std::string& source);

// Runs the profile in the sandbox and reads what it set.
Result<PythonProfileSettings> read_python_profile_settings(const std::string& path);

}  // namespace oishell::agent
