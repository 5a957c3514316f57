#pragma once
// %tokens [prompt]: the conversation's tokens so far (system prompt, messages, images), a prompt's when given, the
// estimated cost of the next call and what the session's calls have cost (agent/llm/cost.h).
#include <string>

namespace oishell::agent {

class Agent;

void show_tokens(Agent& agent, const std::string& prompt);

}  // namespace oishell::agent
