#include "agent/core/message.h"

#include <nlohmann/json.hpp>

namespace oishell::agent {

nlohmann::json to_json(const Message& m) {
  nlohmann::json j = {{"role", m.role}, {"type", m.type}};
  if (!m.format.empty()) j["format"] = m.format;
  j["content"] = m.content;
  if (!m.call_id.empty()) j["call_id"] = m.call_id;
  return j;
}

bool from_json(const nlohmann::json& j, Message* out, std::string* error) {
  if (!j.is_object()) {
    *error = "a message must be a JSON object";
    return false;
  }
  Message m;
  const std::pair<const char*, std::string*> fields[] = {
      {"role", &m.role}, {"type", &m.type}, {"format", &m.format}, {"content", &m.content}, {"call_id", &m.call_id}};
  for (const auto& [key, dest] : fields) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string()) {
      *error = std::string("message field `") + key + "` must be a string";
      return false;
    }
    *dest = it->get<std::string>();
  }
  if (m.role.empty() || m.type.empty()) {
    *error = "a message needs `role` and `type`";
    return false;
  }
  *out = std::move(m);
  return true;
}

}  // namespace oishell::agent
