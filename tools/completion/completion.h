#pragma once
// A command line described as data: the table a parser reads to know its options, and from which the shell
// completions are generated (`oishell completion SHELL`, `interpreter --completion SHELL`), so that the two
// cannot drift apart. Pure: rendering a script reads nothing of the host.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oishell::completion {

// What an option's value or an operand is, i.e. what the shell offers for it.
enum class Value {
  none,       // an option that takes no value (a switch); for operands: there are none
  text,       // free text: nothing to offer
  choice,     // one of `choices`
  file,       // a path (files and directories)
  directory,  // a directory
  profile,    // a built-in policy profile name (listed by `oishell profiles`)
  policy,     // a policy file or a built-in profile name
  command,    // a command and its arguments: the rest of the line
};

struct Option {
  std::vector<std::string> names;    // "--profile", "-p": the first is the canonical name
  Value value = Value::none;
  std::string arg;                   // the value's name in usage texts: "FILE", "NAME", "K=V"
  std::string help;                  // one line
  std::vector<std::string> choices;  // Value::choice
  bool repeatable = false;           // may be given more than once
  bool takes_value() const { return value != Value::none; }
};

struct Operands {
  Value value = Value::none;         // none: the command takes no operands
  std::string name;                  // "policy file", "shell", "command"
  std::vector<std::string> choices;  // Value::choice
  bool many = true;                  // more than one
};

// A verb of a program with verbs (`oishell run`). Every verb also takes -h/--help.
struct Command {
  std::string name;
  std::string summary;
  std::vector<Option> options;
  Operands operands;
};

struct Program {
  std::string name;                  // "oishell"
  std::string generator;             // the command that prints the scripts: "oishell completion"
  std::vector<std::string> aliases;  // other names of the same program ("i" for "interpreter")
  std::vector<Option> options;       // before the verb; for a program without verbs, all of its options
  Operands operands;                 // a program without verbs: its operands
  std::vector<Command> commands;     // the verbs, in the order they are offered
};

enum class Shell { bash, zsh, fish };
inline constexpr const char* kShellNames = "bash, zsh or fish";

// The shell called `name` ("bash", "zsh", "fish"); nullopt for another.
std::optional<Shell> shell_named(std::string_view name);

// The completion script for `program` in `shell`:
//   bash: sourced, or installed as bash-completion/completions/NAME (one symlink per alias);
//   zsh:  autoloaded from $fpath as _NAME (vendor-completions/_NAME), or sourced after compinit;
//   fish: installed as vendor_completions.d/NAME.fish (one symlink per alias), or sourced.
// Built-in profile names are listed at completion time by running `oishell profiles`.
std::string render(const Program& program, Shell shell);

// The option called `name` ("--net", "-p") in `options`; nullptr when there is none.
const Option* find_option(const std::vector<Option>& options, std::string_view name);

}  // namespace oishell::completion
