#include "agent/core/message_templates.h"

namespace oishell::agent {
namespace {

std::string fill(const std::string& pattern, const std::string& content) {
  std::string out;
  size_t start = 0;
  for (size_t at = pattern.find("{content}"); at != std::string::npos; at = pattern.find("{content}", start)) {
    out += pattern.substr(start, at - start) + content;
    start = at + 9;
  }
  return out + pattern.substr(start);
}

}  // namespace

std::vector<Message> apply_message_templates(const AgentConfig& config, std::vector<Message> messages) {
  if (!config.user_message_template.empty()) {
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
      if (it->role != "user" || it->type != "message") continue;
      it->content = fill(config.user_message_template, it->content);
      if (!config.always_apply_user_message_template) break;
    }
  }
  const bool templated_output = !config.code_output_template.empty() || !config.empty_code_output_template.empty();
  if (templated_output) {
    for (auto& m : messages) {
      if (m.role != "computer" || m.type != "console") continue;
      if (config.supports_functions && !m.call_id.empty()) continue;  // a tool result: the API's own form
      bool empty = m.content.find_first_not_of(" \t\r\n") == std::string::npos;
      const std::string& pattern =
          empty && !config.empty_code_output_template.empty() ? config.empty_code_output_template
                                                              : config.code_output_template;
      if (pattern.empty()) continue;
      m = Message{config.code_output_sender == "assistant" ? "assistant" : "user", "message", "",
                  fill(pattern, m.content), ""};
    }
  }
  return messages;
}

}  // namespace oishell::agent
