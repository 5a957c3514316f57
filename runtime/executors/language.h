#pragma once
// The languages an executor can run: name, aliases, the program and the driver that keeps it persistent.
// A language is present when its program exists inside the sandbox: found on the sandbox's PATH (SandboxSpec::env)
// and mapped to the host through the mount plan (or found on the host as it is, for `--sandbox none`).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/sandbox_spec.h"

namespace oishell::executors {

struct Language {
  std::string name;                  // "python"
  std::vector<std::string> aliases;  // "py"
  std::string program;               // "python3": looked up on the sandbox's PATH
  std::vector<std::string> args;     // after the program; "{driver}" is replaced by the driver's path
  std::string driver;                // relative to the data dir
  std::string lost;                  // what a restart loses, for executor_restarted
  bool accepts_stdin = true;         // whether exec's `stdin` can be given to a block
};

// Every language the project has a driver for.
const std::vector<Language>& all_languages();

// By name or alias, case-insensitive ("py", "Python", "sh", "zsh", "js", "node").
const Language* find_language(std::string_view name_or_alias);

// The sandbox's PATH (from spec.env), or the conventional default when it has none.
std::string sandbox_path_variable(const SandboxSpec& spec);

// Maps a path as seen inside the sandbox to the host path it shows, through the mount plan (the last, longest
// bind whose target contains the path). nullopt when the path is not visible inside (no bind, or hidden).
std::optional<std::string> host_path_of(const std::string& inside, const std::vector<MountStep>& mounts);

// The program's path inside the sandbox ("/usr/bin/python3"), or empty when it is not there.
// `confined` false: the executor runs on the host (--sandbox none) and paths are taken as they are.
std::string find_program(const std::string& program, const SandboxSpec& spec, bool confined);

}  // namespace oishell::executors
