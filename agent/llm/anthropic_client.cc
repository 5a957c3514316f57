#include "agent/llm/anthropic_client.h"

#include "agent/core/json_util.h"
#include "agent/llm/convert.h"
#include "agent/llm/provider.h"
#include "agent/llm/transport.h"

namespace oishell::agent {

using nlohmann::json;

namespace {
constexpr int kDefaultMaxTokens = 4096;  // the API requires max_tokens

// A token count of a usage object: `fallback` when absent, null, not a whole number or out of range.
long count(const json& usage, const char* key, long fallback = 0) {
  const auto value = oishell::agent::json_count(usage, key, oishell::agent::kMaxTokenCount);
  return value ? static_cast<long>(*value) : fallback;
}
}  // namespace

json AnthropicClient::request_body(const std::string& system, const std::vector<Message>& messages) const {
  json body = {{"model", settings_.model},
               {"stream", true},
               {"max_tokens", settings_.max_tokens.value_or(kDefaultMaxTokens)},
               {"system", system},
               {"messages",
                to_anthropic_messages(messages, settings_.supports_functions, settings_.supports_vision,
                                      settings_.harness.get())}};
  if (settings_.temperature) body["temperature"] = *settings_.temperature;
  if (settings_.supports_functions) {
    body["tools"] = json::array();
    for (const OfferedTool& tool : offered_tools(settings_.harness.get(), settings_.languages)) {
      body["tools"].push_back(
          {{"name", tool.name}, {"description", tool.description}, {"input_schema", tool.parameters}});
    }
    if (settings_.computer) body["tools"].push_back(anthropic_computer_tool(*settings_.computer));
  }
  return body;
}

Status apply_anthropic_event(const std::string& event, const std::string& data, LlmResponse* response,
                             std::vector<int>* block_to_call, StreamSink& sink) {
  json j = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::ok();
  std::string type = j.value("type", event);
  if (type == "error") return Status::error("the model's stream reported an error: " + api_error_text(data));
  if (type == "content_block_start") {
    const auto index_value = j.contains("index") ? json_count(j, "index", 256) : std::optional<uint64_t>(0);
    if (!index_value) return Status::ok();
    const size_t index = static_cast<size_t>(*index_value);
    if (block_to_call->size() <= index) block_to_call->resize(index + 1, -1);
    const json& block = j.contains("content_block") ? j["content_block"] : json::object();
    if (block.value("type", "") == "tool_use") {
      ToolCall tc;
      tc.id = block.value("id", "");
      tc.name = block.value("name", "");
      response->tool_calls.push_back(tc);
      (*block_to_call)[index] = static_cast<int>(response->tool_calls.size() - 1);
      sink.on_tool_call(response->tool_calls.size() - 1, response->tool_calls.back());
    } else if (block.value("type", "") == "text") {
      std::string text = block.value("text", "");
      if (!text.empty()) {
        response->text += text;
        sink.on_text(text);
      }
    }
  } else if (type == "content_block_delta") {
    const auto index_value = j.contains("index") ? json_count(j, "index", 256) : std::optional<uint64_t>(0);
    if (!index_value) return Status::ok();
    const size_t index = static_cast<size_t>(*index_value);
    const json& delta = j.contains("delta") ? j["delta"] : json::object();
    std::string dtype = delta.value("type", "");
    if (dtype == "text_delta") {
      std::string text = delta.value("text", "");
      response->text += text;
      if (!text.empty()) sink.on_text(text);
    } else if (dtype == "input_json_delta" && index < block_to_call->size() && (*block_to_call)[index] >= 0) {
      size_t call = static_cast<size_t>((*block_to_call)[index]);
      response->tool_calls[call].arguments += delta.value("partial_json", "");
      sink.on_tool_call(call, response->tool_calls[call]);
    }
  } else if (type == "message_start") {
    // The input tokens: uncached, written to the cache and read from it (all are billed, at different rates).
    if (j.contains("message") && j["message"].is_object() && j["message"].contains("usage") &&
        j["message"]["usage"].is_object()) {
      const json& u = j["message"]["usage"];
      TokenUsage usage;
      usage.input = count(u, "input_tokens") + count(u, "cache_creation_input_tokens") +
                    count(u, "cache_read_input_tokens");
      usage.output = count(u, "output_tokens");
      response->usage = usage;
    }
  } else if (type == "message_delta") {
    if (j.contains("usage") && j["usage"].is_object()) {  // output_tokens so far (cumulative)
      TokenUsage usage = response->usage.value_or(TokenUsage{});
      usage.output = count(j["usage"], "output_tokens", usage.output);
      response->usage = usage;
    }
    if (j.contains("delta") && j["delta"].is_object()) {
      std::string reason = j["delta"].value("stop_reason", "");
      if (!reason.empty()) response->stop_reason = reason;
    }
  } else if (type == "message_stop") {
    response->complete = true;
  }
  return Status::ok();
}

Result<LlmResponse> AnthropicClient::complete(const std::string& system, const std::vector<Message>& messages,
                                              StreamSink& sink) {
  SseCall call;
  call.url = join_endpoint(settings_.api_base, "/messages");
  call.headers = {"Content-Type: application/json", "Accept: text/event-stream", "anthropic-version: 2023-06-01"};
  if (!settings_.api_key.empty()) call.headers.push_back("x-api-key: " + settings_.api_key);
  if (settings_.computer && settings_.supports_functions) call.headers.push_back(kAnthropicComputerBeta);
  call.body = dump_json(request_body(system, messages));

  std::vector<int> block_to_call;
  return stream_response(settings_, call, sink, [&](const SseEvent& ev, LlmResponse* response) {
    return apply_anthropic_event(ev.event, ev.data, response, &block_to_call, sink);
  });
}

}  // namespace oishell::agent
