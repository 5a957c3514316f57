#pragma once
// How far one word is from another, for "did you mean" suggestions: policy keys (policy/diagnostics.cc), profile
// keys (agent/config/profile_keys.cc) and the interpreter's flags (tools/interpreter/oi_flags.cc). Each caller keeps
// its own rule for which candidate is close enough.
#include <cstddef>
#include <string_view>

namespace oishell {

// The Levenshtein distance: the fewest single-character insertions, deletions and substitutions that turn `a`
// into `b` (bytes, not characters). O(|a| * |b|) time, O(|b|) space.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace oishell
