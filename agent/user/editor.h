#pragma once
// `e` at the confirmation: the code opens in $VISUAL / $EDITOR (else nano, else vi) and runs as saved.
#include <optional>
#include <string>

#include "agent/core/display.h"

namespace oishell::agent {

std::optional<std::string> edit_in_editor(const std::string& code, const std::string& language, Display& display);

}  // namespace oishell::agent
