#pragma once
// Open Interpreter's no-model flow: with no model configured the default is gpt-4o, and when no OpenAI key is set
// and a person is at the terminal, the key is asked for there (not echoed), used for this session, and saved only
// when the user answers yes to the question that follows (key_store.h says where and how).
#include <optional>
#include <string>

#include "agent/core/display.h"
#include "agent/llm/key_store.h"
#include "agent/user/user_input.h"

namespace oishell::agent {

// Reads one line from the controlling terminal with echo off (restored after, also on Ctrl-C). nullopt: no
// terminal, Ctrl-C, or end of input.
std::optional<std::string> read_secret_line(const std::string& prompt);

// Asks for `variable`'s key (for `model`), then whether to save it in `store`. nullopt: nothing typed.
std::optional<std::string> ask_for_api_key(const std::string& variable, const std::string& model, Display& display,
                                           UserInput& input, const KeyStore& store);

}  // namespace oishell::agent
