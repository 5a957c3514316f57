#pragma once
// `interpreter --acp`: the agent as an Agent Client Protocol server on stdin/stdout, for editors (Zed, VS Code,
// JetBrains). docs/interpreter.md "Editors (ACP)".
//
//   initialize            protocol version 1; loadSession; text, resource links and embedded resources in prompts
//   session/new           a conversation in the workspace `cwd` (the sandbox's workspace: the first session's cwd;
//                         a later session elsewhere is refused), saved like the terminal's, named by its id
//   session/load          a saved conversation, replayed as session/update notifications
//   session/prompt        one turn: prose as agent_message_chunk, each code block a tool call (execute) with its
//                         output and the workspace files it changed as diffs (agent/acp/acp_display.h); answered
//                         with the stop reason (end_turn, cancelled, max_turn_requests)
//   session/cancel        stops the model or the running block and its children, as Ctrl-C does; the turn ends
//                         with `cancelled`
// The agent asks the editor (session/request_permission) before each block when auto_run is off, and for every
// network destination the sandbox's policy leaves to the user. Code runs in the session's sandbox exactly as in
// the terminal; the model's key stays in this process.
#include <optional>

#include "agent/config/config.h"
#include "agent/sandbox/executor.h"
#include "agent/llm/client.h"

namespace oishell::agent::acp {

struct AcpParts {
  AgentConfig config;
  std::optional<LlmSettings> llm;  // nullopt: no model configured (prompts are refused with an error)
  Executor* executor = nullptr;    // the sandbox, shared by the sessions
  EnvLookup env;                   // where conversations are saved
  int in_fd = 0;                   // the protocol's input and output
  int out_fd = 1;
};

// Serves until the input ends. Returns the process exit status (0).
int run_acp(AcpParts parts);

}  // namespace oishell::agent::acp
