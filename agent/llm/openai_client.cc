#include "agent/llm/openai_client.h"

#include "agent/core/json_util.h"
#include "agent/llm/convert.h"
#include "agent/llm/provider.h"
#include "agent/llm/transport.h"

namespace oishell::agent {

using nlohmann::json;

json OpenAiClient::request_body(const std::string& system, const std::vector<Message>& messages) const {
  json body = {{"model", settings_.model},
               {"stream", true},
               {"messages",
                to_openai_messages(system, messages, settings_.supports_functions, settings_.supports_vision,
                                   settings_.harness.get())}};
  if (settings_.temperature) body["temperature"] = *settings_.temperature;
  if (settings_.max_tokens) body["max_tokens"] = *settings_.max_tokens;
  if (settings_.stream_usage) body["stream_options"] = {{"include_usage", true}};
  if (settings_.supports_functions) {
    body["tools"] = json::array();
    for (const OfferedTool& tool : offered_tools(settings_.harness.get(), settings_.languages)) {
      body["tools"].push_back(
          {{"type", "function"},
           {"function", {{"name", tool.name}, {"description", tool.description}, {"parameters", tool.parameters}}}});
    }
    if (settings_.computer) body["tools"].push_back(openai_computer_tool(*settings_.computer));
  }
  return body;
}

Status apply_openai_chunk(const std::string& data, LlmResponse* response, StreamSink& sink) {
  if (data == "[DONE]") {
    response->complete = true;
    return Status::ok();
  }
  json chunk = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!chunk.is_object()) return Status::ok();  // not JSON: tolerated (some gateways send keep-alive text)
  if (auto err = chunk.find("error"); err != chunk.end() && !err->is_null()) {
    return Status::error("the model's stream reported an error: " + api_error_text(dump_json(chunk)));
  }
  // With stream_options.include_usage the last chunk (no choices) carries the usage; some servers send it on
  // every chunk, so the last one seen counts.
  if (auto u = chunk.find("usage"); u != chunk.end() && u->is_object()) {
    auto count = [&u](const char* key) -> long {
      return static_cast<long>(json_count(*u, key, kMaxTokenCount).value_or(0));
    };
    TokenUsage usage;
    usage.input = count("prompt_tokens");
    usage.output = count("completion_tokens");
    if (usage.input > 0 || usage.output > 0) response->usage = usage;
  }
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array() || choices->empty()) return Status::ok();
  const json& choice = (*choices)[0];
  if (auto delta = choice.find("delta"); delta != choice.end() && delta->is_object()) {
    if (auto c = delta->find("content"); c != delta->end() && c->is_string()) {
      const auto& text = c->get_ref<const std::string&>();
      if (!text.empty()) {
        response->text += text;
        sink.on_text(text);
      }
    }
    if (auto calls = delta->find("tool_calls"); calls != delta->end() && calls->is_array()) {
      for (const json& call : *calls) {
        // An index past the calls one answer can hold (or not a small whole number) is not a call of this answer.
        const auto index_value = call.contains("index") ? json_count(call, "index", 64) : std::optional<uint64_t>(0);
        if (!index_value) continue;
        const size_t index = static_cast<size_t>(*index_value);
        if (response->tool_calls.size() <= index) response->tool_calls.resize(index + 1);
        ToolCall& tc = response->tool_calls[index];
        if (call.contains("id") && call["id"].is_string()) tc.id = call["id"].get<std::string>();
        if (auto fn = call.find("function"); fn != call.end() && fn->is_object()) {
          if (fn->contains("name") && (*fn)["name"].is_string()) tc.name += (*fn)["name"].get<std::string>();
          if (fn->contains("arguments") && (*fn)["arguments"].is_string()) {
            tc.arguments += (*fn)["arguments"].get<std::string>();
          }
        }
        sink.on_tool_call(index, tc);
      }
    }
  }
  if (auto fr = choice.find("finish_reason"); fr != choice.end() && fr->is_string()) {
    response->stop_reason = fr->get<std::string>();
    response->complete = true;
  }
  return Status::ok();
}

Result<LlmResponse> OpenAiClient::complete(const std::string& system, const std::vector<Message>& messages,
                                           StreamSink& sink) {
  SseCall call;
  call.url = chat_completions_url(settings_);
  call.headers = {"Content-Type: application/json", "Accept: text/event-stream"};
  if (!settings_.api_key.empty()) {
    call.headers.push_back(settings_.provider == Provider::azure ? "api-key: " + settings_.api_key
                                                                 : "Authorization: Bearer " + settings_.api_key);
  }
  call.body = dump_json(request_body(system, messages));

  return stream_response(settings_, call, sink, [&](const SseEvent& ev, LlmResponse* response) {
    return apply_openai_chunk(ev.data, response, sink);
  });
}

}  // namespace oishell::agent
