#include "agent/server/oi_protocol.h"

namespace oishell::agent::server {

using nlohmann::json;

std::string lmc_string(const json& chunk, const char* key) {
  if (!chunk.is_object()) return "";
  auto it = chunk.find(key);
  return it != chunk.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool lmc_true(const json& chunk, const char* key) {
  if (!chunk.is_object()) return false;
  auto it = chunk.find(key);
  return it != chunk.end() && it->is_boolean() && it->get<bool>();
}

namespace {

LmcStep error_step(std::string why) {
  LmcStep s;
  s.kind = LmcStep::Kind::error;
  s.error = std::move(why);
  return s;
}

}  // namespace

LmcStep LmcAccumulator::feed(const json& chunk) {
  if (!chunk.is_object()) return error_step("a chunk must be a JSON object");
  if (lmc_string(chunk, "format") == "active_line") return {};  // (OI ignores these too)
  for (const char* key : {"role", "type", "format"}) {
    if (chunk.contains(key) && !chunk[key].is_string()) return error_step(std::string("`") + key + "` must be a string");
  }
  for (const char* key : {"start", "end"}) {
    if (chunk.contains(key) && !chunk[key].is_boolean()) {
      return error_step(std::string("`") + key + "` must be true or false");
    }
  }
  LmcStep step;
  bool start = lmc_true(chunk, "start");
  if (start) {
    step.started = true;
    open_ = Message{lmc_string(chunk, "role"), lmc_string(chunk, "type"), lmc_string(chunk, "format"), "", ""};
    if (open_->role.empty()) open_->role = "user";
  }
  if (chunk.contains("content")) {
    const json& c = chunk["content"];
    if (!c.is_string()) return error_step("`content` must be a string");
    if (!open_) {
      if (!chunk.contains("role") || !chunk.contains("type")) {
        return error_step("send a chunk with \"start\": true (or a role and a type) before content");
      }
      open_ = Message{lmc_string(chunk, "role"), lmc_string(chunk, "type"), lmc_string(chunk, "format"), "", ""};
      step.started = true;
    }
    if (open_->type.empty()) open_->type = lmc_string(chunk, "type");
    if (open_->format.empty()) open_->format = lmc_string(chunk, "format");
    if (open_->content.size() + c.get_ref<const std::string&>().size() > max_) {
      open_.reset();
      return error_step("a message larger than " + std::to_string(max_) + " bytes");
    }
    open_->content += c.get<std::string>();
  }
  if (lmc_true(chunk, "end")) {
    if (!open_) return error_step("an \"end\" chunk without an open message");
    step.message = std::move(*open_);
    open_.reset();
    if (step.message.type.empty()) step.message.type = "message";
    if (step.message.type == "command") step.kind = LmcStep::Kind::command;
    else if (step.message.role == "user" && step.message.type == "message") step.kind = LmcStep::Kind::user_message;
    else step.kind = LmcStep::Kind::other_message;
  }
  return step;
}

Result<ChatRequest> parse_chat_request(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::error("the request body is not JSON");
  if (!j.is_object()) return Status::error("the request body is not a JSON object");
  ChatRequest r;
  if (j.contains("model")) {
    if (!j["model"].is_string()) return Status::error("`model` must be a string");
    r.model = j["model"].get<std::string>();
  }
  if (j.contains("stream") && !j["stream"].is_null()) {
    if (!j["stream"].is_boolean()) return Status::error("`stream` must be true or false");
    r.stream = j["stream"].get<bool>();
  }
  if (!j.contains("messages") || !j["messages"].is_array() || j["messages"].empty()) {
    return Status::error("`messages` must be a non-empty list");
  }
  const json& messages = j["messages"];
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return Status::error("messages[" + std::to_string(i) + "] needs a string `role`");
    }
    std::string role = m["role"].get<std::string>();
    std::string text;
    const json content = m.contains("content") ? m["content"] : json();
    if (content.is_string()) {
      text = content.get<std::string>();
    } else if (content.is_array()) {
      for (const json& part : content) {
        std::string type = part.is_object() ? lmc_string(part, "type") : "";
        if (type == "text" && part.contains("text") && part["text"].is_string()) {
          if (!text.empty()) text += "\n";
          text += part["text"].get<std::string>();
        } else if (type == "image_url" || type == "input_image") {
          return Status::error("messages[" + std::to_string(i) + "]: images are not supported");
        } else {
          return Status::error("messages[" + std::to_string(i) + "]: a content part must be {\"type\": \"text\", "
                               "\"text\": ...}");
        }
      }
    } else if (!content.is_null()) {
      return Status::error("messages[" + std::to_string(i) + "]: `content` must be a string or a list of parts");
    }
    bool last = i + 1 == messages.size();
    if (last) {
      if (role != "user") return Status::error("the last message must be the user's");
      r.user_text = text;
      break;
    }
    if (role == "user") r.history.push_back(Message::user(text));
    else if (role == "assistant" && !text.empty()) r.history.push_back(Message::assistant(text));
    // system, developer, tool: left out
  }
  if (r.user_text.empty()) return Status::error("the last message is empty");
  return r;
}

json completion_chunk(const std::string& id, const std::string& model, long created,
                      const std::optional<std::string>& content, bool first, bool last) {
  json delta = json::object();
  if (first) delta["role"] = "assistant";
  if (content) delta["content"] = *content;
  return {{"id", id},
          {"object", "chat.completion.chunk"},
          {"created", created},
          {"model", model},
          {"choices", json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", last ? json("stop") : json()}}})}};
}

json completion(const std::string& id, const std::string& model, long created, const std::string& content) {
  return {{"id", id},
          {"object", "chat.completion"},
          {"created", created},
          {"model", model},
          {"choices", json::array({{{"index", 0},
                                    {"message", {{"role", "assistant"}, {"content", content}}},
                                    {"finish_reason", "stop"}}})},
          {"usage", {{"prompt_tokens", 0}, {"completion_tokens", 0}, {"total_tokens", 0}}}};
}

}  // namespace oishell::agent::server
