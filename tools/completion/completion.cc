// completion::render and the helpers the renderers share: see completion.h.
#include "tools/completion/completion.h"

#include <algorithm>

#include "tools/completion/render.h"

namespace oishell::completion {

std::optional<Shell> shell_named(std::string_view name) {
  if (name == "bash") return Shell::bash;
  if (name == "zsh") return Shell::zsh;
  if (name == "fish") return Shell::fish;
  return std::nullopt;
}

std::string render(const Program& program, Shell shell) {
  switch (shell) {
    case Shell::bash:
      return internal::render_bash(program);
    case Shell::zsh:
      return internal::render_zsh(program);
    case Shell::fish:
      return internal::render_fish(program);
  }
  return {};
}

const Option* find_option(const std::vector<Option>& options, std::string_view name) {
  for (const auto& option : options) {
    if (std::find(option.names.begin(), option.names.end(), name) != option.names.end()) return &option;
  }
  return nullptr;
}

namespace internal {

std::string identifier(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += keep ? c : '_';
  }
  return out;
}

std::string sh_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<Option> with_help(const std::vector<Option>& options) {
  std::vector<Option> out = options;
  if (!find_option(out, "--help")) out.push_back(Option{{"--help", "-h"}, Value::none, "", "show the usage", {}});
  return out;
}

}  // namespace internal
}  // namespace oishell::completion
