#pragma once
// The profile actions of Open Interpreter's command line, which end the run: --profiles (print the profiles folder,
// creating it), --local_models (the models folder, likewise), --reset_profile [NAME] (rewrite a built-in profile's
// file in the folder; all of them without a name). The folder is opened with xdg-open only when a display is
// present and stdout is a terminal. And the first run's default.yaml, as OI writes it.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/llm/provider.h"
#include "base/status.h"

namespace oishell::agent {

// Runs the action the flags ask for, printing to `out` (results) and `err` (errors). nullopt: none was asked.
std::optional<int> run_profile_actions(const CliOptions& cli, const EnvLookup& env, std::FILE* out, std::FILE* err);

// Writes the built-in profile `name` (all of them when empty) to the profiles folder. A file that differs from the
// built-in text is kept as NAME.yaml.bak first; one that is the same is left alone. Returns a line per profile.
Result<std::vector<std::string>> reset_profiles(const std::string& name, const EnvLookup& env);

// Writes default.yaml (the built-in `default`, every setting documented) when the profiles folder has none.
// *written says whether it did.
Status ensure_default_profile(const EnvLookup& env, bool* written);

}  // namespace oishell::agent
