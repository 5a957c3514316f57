#pragma once
// The built-in profiles, under Open Interpreter's names (default, fast, vision, os, local, local-vision, local-os,
// codestral, codestral-vision, codestral-os, assistant, llama3, llama3-vision, llama3-os, groq): what each means
// for this agent, as YAML text that loads through the same parser as a user's profile. A file of the same name in
// the profiles directory wins over the built-in one. `default` is also what is written to default.yaml on first
// run, with every setting documented in comments.
#include <optional>
#include <span>
#include <string_view>

namespace oishell::agent {

std::span<const std::string_view> builtin_profile_names();
std::optional<std::string_view> builtin_profile(std::string_view name);

}  // namespace oishell::agent
