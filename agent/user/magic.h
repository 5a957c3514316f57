#pragma once
// Open Interpreter's magic commands: %% cmd, %reset, %undo, %save_message [path], %load_message [path],
// %jupyter [path], %markdown [path], %auto_run [on|off], %verbose [on|off], %debug [on|off] (a switch without an
// argument turns on, as in OI), %tokens, %info, %help; and ours: %policy.
#include <string>

namespace oishell::agent {

class Agent;

// Handles a line starting with '%'. Unknown commands print help.
void handle_magic(Agent& agent, const std::string& line);

}  // namespace oishell::agent
