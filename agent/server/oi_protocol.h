#pragma once
// Open Interpreter's server protocol, the parts that are pure data (no sockets): the LMC chunks a websocket client
// sends, accumulated into messages, and the body of a chat-completions request, turned into a conversation.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/core/message.h"
#include "base/status.h"

namespace oishell::agent::server {

// What a client's chunk completes. A message is built from {"role","type",["format"],"start":true}, chunks with
// "content" (appended), and one with "end": true; a chunk with content and no open message opens one (its role and
// type given). Commands are messages of type "command": "go" approves the code waiting for confirmation, "stop"
// stops what runs. A field of the wrong type (`"start": "yes"`) is an error step naming it.
struct LmcStep {
  enum class Kind { more, user_message, command, other_message, error };
  Kind kind = Kind::more;
  Message message;    // user_message, command, other_message: the whole message
  std::string error;  // error: what was wrong
  bool started = false;  // the chunk started a message (OI: a start stops what runs)
};

// A field of a client's chunk, read without trusting its type (json::value() throws on a wrong one): the string,
// or "" when absent or not a string; whether it is the boolean true (anything else is not).
std::string lmc_string(const nlohmann::json& chunk, const char* key);
bool lmc_true(const nlohmann::json& chunk, const char* key);

class LmcAccumulator {
 public:
  explicit LmcAccumulator(size_t max_content_bytes = 1024 * 1024) : max_(max_content_bytes) {}
  LmcStep feed(const nlohmann::json& chunk);

 private:
  size_t max_;
  std::optional<Message> open_;
};

// A POST /openai/chat/completions body (OpenAI's shape). Content is a string or a list of parts of which text parts
// are joined; image parts are refused. `system` and `developer` messages are left out (the agent has its own system
// prompt); tool messages too. The last message must be the user's.
struct ChatRequest {
  std::string model = "open-interpreter";
  bool stream = false;
  std::vector<Message> history;  // every message before the last, as user / assistant messages
  std::string user_text;         // the last message
};
[[nodiscard]] Result<ChatRequest> parse_chat_request(const std::string& body);

// The answer's JSON, streamed (chat.completion.chunk) or whole (chat.completion).
nlohmann::json completion_chunk(const std::string& id, const std::string& model, long created,
                                const std::optional<std::string>& content, bool first, bool last);
nlohmann::json completion(const std::string& id, const std::string& model, long created,
                          const std::string& content);

}  // namespace oishell::agent::server
