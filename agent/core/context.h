#pragma once
// Keeping the conversation inside the model's context window: a token estimate (about 4 bytes a token for English
// and code; no tokenizer ships with the agent) and trimming, oldest messages first, keeping the system prompt and
// the newest message (cut in the middle if it alone is too big). An image counts what the APIs charge for it (about
// width×height/750 tokens, agent/llm/image.h), not its base64 text; when the conversation does not fit, images are
// left out first, oldest first (each replaced by a line saying what it was), before any message is.
#include <cstddef>
#include <string>
#include <vector>

#include "agent/core/message.h"

namespace oishell::agent {

size_t estimate_tokens(std::string_view text);
size_t estimate_tokens(const Message& m);  // content plus a per-message overhead
size_t estimate_tokens(const std::vector<Message>& messages);

struct Trimmed {
  std::vector<Message> messages;
  size_t dropped = 0;      // messages left out
  bool cut_last = false;   // the newest message was shortened
  size_t images_dropped = 0;  // images replaced by their description
  size_t tokens = 0;       // estimate of system + messages
};

// Fits `messages` after `system` into `context_window` tokens, keeping `reserve` tokens for the answer.
Trimmed trim_to_window(const std::string& system, const std::vector<Message>& messages, size_t context_window,
                       size_t reserve);

}  // namespace oishell::agent
