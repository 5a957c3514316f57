#pragma once
// The model side of the agent: settings that say which API to talk to, a streaming client interface, and the
// OpenAI-compatible and Anthropic implementations behind it (make_client()).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/sandbox/computer_tool.h"
#include "agent/config/harness.h"
#include "agent/core/message.h"
#include "base/status.h"

namespace oishell::agent {

// The wire format spoken: OpenAI-compatible chat completions (OpenAI and the gateways and hosts that copy its API),
// Anthropic Messages, Ollama's OpenAI-compatible API, and Azure OpenAI (chat completions at Azure's URL shape, with
// an `api-key` header).
enum class Provider { openai, anthropic, ollama, azure };
std::string_view provider_name(Provider p);  // "openai", "anthropic", "ollama", "azure"

// A model's price in USD per million tokens.
struct TokenPrice {
  double input = 0;
  double output = 0;
};

// What one answer cost in tokens, as the API reported it.
struct TokenUsage {
  long input = 0;   // prompt tokens (cache reads and writes included)
  long output = 0;  // completion tokens
};

struct LlmSettings {
  Provider provider = Provider::openai;
  std::string model;          // as the API wants it (prefixes like "anthropic/" removed)
  std::string api_base;       // e.g. "https://api.openai.com/v1"
  std::string api_key;        // may be empty (local servers)
  std::string key_source;     // where the key came from, for error messages ("OPENAI_API_KEY", "--api_key")
  std::string key_variable;   // the variable the provider's key is read from ("OPENAI_API_KEY")
  std::string service;        // the provider table's row ("openai", "groq", "azure"; agent/llm/provider.h)
  std::string service_name;   // "OpenAI", "Groq", "Azure OpenAI", for messages
  std::string api_version;    // Azure's api-version query parameter
  bool stream_usage = false;  // ask for token usage in the stream (OpenAI's stream_options.include_usage)
  bool supports_vision = false;  // images are sent as images (else described in text)
  std::optional<TokenPrice> price;  // nullopt: unknown, the session's cost cannot be tracked
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  bool supports_functions = true;
  std::vector<std::string> languages = {"python", "shell", "javascript"};  // the execute tool's enum
  std::optional<ComputerScreen> computer;  // --os: the `computer` tool, on a screen of this size
  std::shared_ptr<const Harness> harness;  // a harness profile's tools (instead of, or beside, execute)
  int max_retries = 4;         // for 429, 5xx and network errors before any byte arrived
  long retry_base_ms = 1000;   // doubles each retry; Retry-After wins when the server sends it
  long connect_timeout_ms = 10000;
  long idle_timeout_s = 300;
};

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text as the model wrote it (may be broken; code_extract repairs it)
};

struct LlmResponse {
  std::string text;
  std::vector<ToolCall> tool_calls;
  std::string stop_reason;   // "stop", "tool_calls", "end_turn", "length", ...
  bool complete = false;     // the stream ended properly ([DONE], message_stop, finish_reason)
  bool cancelled = false;    // Ctrl-C
  std::string cut_reason;    // why an incomplete stream ended ("connection closed", curl's message)
  std::optional<TokenUsage> usage;  // when the API reported it
};

// What the client reports while the answer streams in.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual void on_text(std::string_view delta) = 0;
  // A tool call began (index in the response), and its arguments so far (the whole text, not a delta).
  virtual void on_tool_call(size_t index, const ToolCall& call_so_far) = 0;
  virtual void on_tick() {}
  virtual void on_retry(const std::string& why, long delay_ms) = 0;
  // Ctrl-C: return true to abort the stream.
  virtual bool cancelled() { return false; }
  virtual int cancel_fd() { return -1; }
};

class LlmClient {
 public:
  virtual ~LlmClient() = default;
  // Streams one answer to `messages` (the conversation in Open Interpreter's form) after `system`.
  // An error is returned only when nothing usable arrived; a stream cut halfway returns what arrived with
  // complete=false.
  virtual Result<LlmResponse> complete(const std::string& system, const std::vector<Message>& messages,
                                       StreamSink& sink) = 0;
  const LlmSettings& settings() const { return settings_; }
  // The execute tool's language enum, once the sandbox has said what it runs.
  void set_languages(std::vector<std::string> languages) { settings_.languages = std::move(languages); }

 protected:
  explicit LlmClient(LlmSettings settings) : settings_(std::move(settings)) {}
  LlmSettings settings_;
};

std::unique_ptr<LlmClient> make_client(const LlmSettings& settings);

}  // namespace oishell::agent
