#pragma once
// The languages an executor can run: name, aliases, the program and the driver that keeps it persistent.
// A language is present when its program exists inside the sandbox: found on the sandbox's PATH (SandboxSpec::env)
// and mapped to the host through the mount plan (or found on the host as it is, for `--sandbox none`).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/sandbox_spec.h"

namespace oishell::executors {

// How the driver reaches the supervisor (docs/protocol.md, "Executor control channel").
enum class ControlChannel {
  socket,  // a socketpair at fd 3, both ways
  // Requests on a pipe at fd 3, reports on a pipe at fd 4: for runtimes that can only open a path, since
  // /proc/self/fd/N of a socket refuses open(2) with ENXIO (R's file(), the JVM's FileInputStream).
  pipes,
};

struct Language {
  std::string name;                  // "python"
  std::vector<std::string> aliases;  // "py"
  std::string program;               // "python3": looked up on the sandbox's PATH
  std::vector<std::string> args;     // after the program; "{driver}" is replaced by the driver's path
  std::string driver;                // relative to the data dir
  std::string lost;                  // what a restart loses, for executor_restarted
  bool accepts_stdin = true;         // whether exec's `stdin` can be given to a block
  ControlChannel control = ControlChannel::socket;
  // How long the driver may take to say it is ready (`R`) before it is killed and its block fails. A block's wall
  // time counts from then, so a slow start (a JVM's seconds) is not taken from the block.
  std::chrono::milliseconds start_timeout{30'000};
  std::vector<std::string> also_requires;  // other programs that must be on the sandbox's PATH ("jshell": a JDK)
};

// Every language the project has a driver for.
const std::vector<Language>& all_languages();

// By name or alias, case-insensitive ("py", "Python", "sh", "zsh", "js", "node", "rb", "R", "jshell").
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
