#pragma once
// Open Interpreter's message templates (profile keys), applied to what the model is sent, never to what is saved:
//   user_message_template            the last user message ("{content}" is its text); every one with
//                                    always_apply_user_message_template
//   code_output_template             a block's output when it goes back as text (fenced-code mode, or an output
//                                    that answers no tool call); "{content}" is the output
//   empty_code_output_template       the same when the block printed nothing
//   code_output_sender               "user" (default) or "assistant": who says that text
// With none of them set, messages are left as they are (and the API converters word outputs themselves).
#include <vector>

#include "agent/config/config.h"
#include "agent/core/message.h"

namespace oishell::agent {

std::vector<Message> apply_message_templates(const AgentConfig& config, std::vector<Message> messages);

}  // namespace oishell::agent
