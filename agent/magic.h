#pragma once
// Open Interpreter's magic commands: %% cmd, %reset, %undo, %save_message [path], %load_message [path],
// %auto_run [on|off], %verbose [on|off], %tokens, %info, %policy, %help.
#include <string>

namespace oishell::agent {

class Agent;

// Handles a line starting with '%'. Unknown commands print help.
void handle_magic(Agent& agent, const std::string& line);

}  // namespace oishell::agent
