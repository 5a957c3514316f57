#pragma once
// The three renderers behind completion::render, and the quoting they share.
#include <string>
#include <string_view>

#include "tools/completion/completion.h"

namespace oishell::completion::internal {

std::string render_bash(const Program& program);
std::string render_zsh(const Program& program);
std::string render_fish(const Program& program);

// `name` as part of a shell function name: letters, digits and `_` kept, anything else `_`.
std::string identifier(std::string_view name);
// `text` as one word in single quotes for sh/bash/zsh ('it'\''s').
std::string sh_quote(std::string_view text);
// The options of a verb: `command.options` and -h/--help.
std::vector<Option> with_help(const std::vector<Option>& options);

}  // namespace oishell::completion::internal
