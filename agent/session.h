#pragma once
// A whole `interpreter` run after the flags are parsed: profile and flags merged, the model chosen (or --local
// found), the sandbox supervisor started, a conversation resumed (--conversations), then one prompt (arguments or
// --stdin) or the interactive chat. Returns the process exit status:
//   0 done; 1 an error (model, network, sandbox); 2 bad flags or profile, or no model for a one-shot prompt;
//   3 stopped by --max_turns; 4 stopped by --max_budget; 130 stopped by Ctrl-C.
#include "agent/config/config.h"

namespace oishell::agent {

int run_session(const CliOptions& cli);

}  // namespace oishell::agent
