#pragma once
// The one rule for a ``` fence line, read by the display while an answer streams (agent/core/stream_splitter.cc) and by
// what runs (agent/core/code_extract.cc): a line is a fence for both or for neither, so a block cannot run while it is
// shown as prose. A fence is at most three spaces, then three backticks (as in CommonMark: a tab or a fourth space
// before it makes an indented line, which is text).
#include <optional>
#include <string>
#include <string_view>

namespace oishell::agent {

// The tag of an opening fence line ("```Python x" -> "Python", "```" -> ""); nullopt when the line is no fence.
// `line` is one line without its newline (a trailing '\r' is white space).
std::optional<std::string> opening_fence(std::string_view line);

// Whether `line` closes a block: the fence alone ("```", indented by at most three spaces, white space after).
bool closing_fence(std::string_view line);

// Whether `start`, the beginning of a line so far, could still become a fence (the display holds it back until it
// knows).
bool could_be_fence(std::string_view start);

}  // namespace oishell::agent
