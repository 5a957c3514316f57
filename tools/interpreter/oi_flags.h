#pragma once
// Open Interpreter 0.4.3's argument table (its names, nicknames and kinds) plus this agent's own flags, and the
// step that reads a command line the way OI's argparse does before CLI11 sees it: every nickname ("-lsv", "-os",
// "-y") is one option, never a bundle of one-letter flags; `--name=value` and `-mVALUE` (one-letter nicknames that
// take a value) work; a unique prefix of a long name works (`--mod gpt-4o`, argparse's allow_abbrev). What comes out
// is long names only, which is all CLI11 is given.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace oishell::interpreter {

enum class FlagKind {
  flag,            // --name
  negatable,       // --name and --no-name (argparse's BooleanOptionalAction)
  value,           // --name VALUE
  optional_value,  // --name [VALUE]: the next word is its value unless it starts with '-'
};

struct FlagSpec {
  std::string_view name;      // long name without "--"
  std::string_view nickname;  // OI's short form without "-" (may be several letters); empty: none
  FlagKind kind;
  bool open_interpreter;      // in OI 0.4.3's table (false: this agent's own)
};

const std::vector<FlagSpec>& flag_table();
const FlagSpec* find_flag(std::string_view long_name);

struct NormalizedArgs {
  std::vector<std::string> args;   // "--name", "--name=value" or "--name" "value"; positional words as given
  bool words_first = false;        // argv[1] was a word: OI's `i <words>` (every argument is a word of the message)
  std::vector<std::string> notes;  // e.g. a deprecated name that was renamed
};

// Reads argv[1..] (not argv[0]). An unknown or ambiguous option is an error that names it and, where one is close,
// the option meant.
Result<NormalizedArgs> normalize_args(const std::vector<std::string>& argv);

}  // namespace oishell::interpreter
