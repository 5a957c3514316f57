#include "agent/llm/convert.h"

#include <deque>

#include "agent/sandbox/computer_tool.h"
#include "agent/core/json_util.h"
#include "agent/llm/image.h"
#include "base/markdown_fence.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

// Fences the content cannot close (base/markdown_fence.h): output that closed a fixed ``` could write what looks like
// the agent's own text to the model.
std::string fenced(const Message& m) {
  const std::string fence = fence_for(m.content);
  return fence + m.format + "\n" + m.content + "\n" + fence;
}

std::string non_empty(const std::string& s, const char* fallback) { return s.empty() ? fallback : s; }

// Assigns ids to tool calls that have none, and pairs outputs with the call they answer.
class CallIds {
 public:
  std::string open(const Message& code) {
    std::string id = code.call_id.empty() ? "call_" + std::to_string(++generated_) : code.call_id;
    pending_.push_back(id);
    return id;
  }
  // The call an output answers: its own id when it is pending, else the oldest pending one.
  bool answer(const Message& console, std::string* id) {
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (!console.call_id.empty() && *it == console.call_id) {
        *id = *it;
        pending_.erase(it);
        return true;
      }
    }
    if (pending_.empty()) return false;
    *id = pending_.front();
    pending_.pop_front();
    return true;
  }
  std::deque<std::string> take_pending() { return std::exchange(pending_, {}); }
  bool has_pending() const { return !pending_.empty(); }

 private:
  std::deque<std::string> pending_;
  int generated_ = 0;
};

constexpr const char* kNotRun = "The code was not run.";
constexpr const char* kCodeImageIntro = "The code displayed this image (it was also shown to the user):";

}  // namespace

const char* const kExecuteToolDescription =
    "Executes code in a persistent sandboxed environment on the user's machine and returns the output. "
    "Variables and the working directory persist between calls of the same language.";

json execute_tool_schema(const std::vector<std::string>& languages) {
  return {{"type", "object"},
          {"properties",
           {{"language",
             {{"type", "string"},
              {"description", "The programming language (required parameter to the `execute` function)"},
              {"enum", languages}}},
            {"code", {{"type", "string"}, {"description", "The code to execute (required)"}}}}},
          {"required", {"language", "code"}}};
}

std::vector<OfferedTool> offered_tools(const Harness* harness, const std::vector<std::string>& languages) {
  std::vector<OfferedTool> tools;
  if (!harness || harness->execute_tool) {
    tools.push_back({"execute", kExecuteToolDescription, execute_tool_schema(languages)});
  }
  if (harness) {
    for (const auto& tool : harness->tools) tools.push_back({tool.name, tool.description, tool.parameters});
  }
  return tools;
}

std::string output_as_user_text(const std::string& output) {
  const std::string shown = non_empty(output, "(no output)");
  const std::string fence = fence_for(shown);
  return "The code above was executed. Its output:\n" + fence + "\n" + shown + "\n" + fence;
}

json to_openai_messages(const std::string& system, const std::vector<Message>& messages, bool use_tools,
                        bool vision, const Harness* harness) {
  json out = json::array();
  out.push_back({{"role", "system"}, {"content", system}});
  CallIds ids;
  auto close_pending = [&] {
    for (const auto& id : ids.take_pending()) {
      out.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", kNotRun}});
    }
  };
  for (const Message& m : messages) {
    if (m.role == "assistant" && m.type == "code" && use_tools) {
      const bool tool = m.format == kComputerLanguage || (harness && harness->find(m.format));
      json call = {{"id", ""}, {"type", "function"},
                   {"function", {{"name", tool ? m.format : "execute"},
                                 {"arguments", tool ? m.content
                                                        : dump_json(json{{"language", m.format},
                                                                         {"code", m.content}})}}}};
      // Parallel calls join the assistant message right before them (nothing answered it yet).
      if (out.back()["role"] != "assistant") {
        close_pending();
        out.push_back({{"role", "assistant"}, {"content", nullptr}});
      }
      call["id"] = ids.open(m);
      out.back()["tool_calls"].push_back(std::move(call));
      continue;
    }
    if (m.role == "computer" && m.type == "console" && use_tools) {
      std::string id;
      if (ids.answer(m, &id)) {
        out.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", non_empty(m.content, "(no output)")}});
        continue;
      }
    }
    close_pending();
    if (m.role == "user" && m.type == "message") {
      out.push_back({{"role", "user"}, {"content", m.content}});
    } else if (m.role == "assistant") {
      std::string text = m.type == "code" ? fenced(m) : m.content;
      if (text.empty()) continue;
      if (!out.empty() && out.back()["role"] == "assistant" && !out.back().contains("tool_calls") &&
          out.back()["content"].is_string()) {
        out.back()["content"] = out.back()["content"].get<std::string>() + "\n\n" + text;
      } else {
        out.push_back({{"role", "assistant"}, {"content", text}});
      }
    } else if (m.role == "computer" && m.type == "console") {
      out.push_back({{"role", "user"}, {"content", output_as_user_text(m.content)}});
    } else if ((m.role == "computer" || m.role == "user") && m.type == "image") {
      if (!vision || !is_image_data(m)) {
        out.push_back({{"role", "user"}, {"content", image_as_text(m)}});
        continue;
      }
      json parts = json::array();
      if (m.role == "computer") parts.push_back({{"type", "text"}, {"text", kCodeImageIntro}});
      parts.push_back({{"type", "image_url"},
                       {"image_url", {{"url", "data:" + image_media_type(m) + ";base64," + m.content}}}});
      // With the user message before it (the user's words, a code output, an earlier image) as one message.
      if (out.back()["role"] == "user") {
        json& content = out.back()["content"];
        if (content.is_string()) content = json::array({{{"type", "text"}, {"text", content.get<std::string>()}}});
        for (auto& p : parts) content.push_back(std::move(p));
      } else {
        out.push_back({{"role", "user"}, {"content", std::move(parts)}});
      }
    }
  }
  close_pending();
  return out;
}

json to_anthropic_messages(const std::vector<Message>& messages, bool use_tools, bool vision,
                           const Harness* harness) {
  json out = json::array();
  auto add_block = [&out](const char* role, json block) {
    if (out.empty() || out.back()["role"] != role) out.push_back({{"role", role}, {"content", json::array()}});
    out.back()["content"].push_back(std::move(block));
  };
  CallIds ids;
  auto close_pending = [&] {
    for (const auto& id : ids.take_pending()) {
      add_block("user", {{"type", "tool_result"}, {"tool_use_id", id}, {"content", kNotRun}});
    }
  };
  for (const Message& m : messages) {
    if (m.role == "assistant" && m.type == "code" && use_tools) {
      if (ids.has_pending() && (out.empty() || out.back()["role"] != "assistant")) close_pending();
      std::string id = ids.open(m);
      if (m.format == kComputerLanguage || (harness && harness->find(m.format))) {
        json input = json::parse(m.content, nullptr, /*allow_exceptions=*/false);
        if (!input.is_object()) input = json::object();  // the API wants an object; the result says what was wrong
        add_block("assistant", {{"type", "tool_use"}, {"id", id}, {"name", m.format}, {"input", input}});
      } else {
        add_block("assistant", {{"type", "tool_use"}, {"id", id}, {"name", "execute"},
                                {"input", {{"language", m.format}, {"code", m.content}}}});
      }
      continue;
    }
    if (m.role == "computer" && m.type == "console" && use_tools) {
      std::string id;
      if (ids.answer(m, &id)) {
        add_block("user", {{"type", "tool_result"}, {"tool_use_id", id},
                           {"content", non_empty(m.content, "(no output)")}});
        continue;
      }
    }
    if (m.role == "assistant" && ids.has_pending()) close_pending();
    if ((m.role == "computer" || m.role == "user") && m.type == "image") {
      close_pending();
      // A screenshot the computer tool answered with goes inside that call's result, where the API expects it.
      if (vision && is_image_data(m) && !m.call_id.empty() && !out.empty() && out.back()["role"] == "user") {
        json& last = out.back()["content"].back();
        if (last.value("type", "") == "tool_result" && last.value("tool_use_id", "") == m.call_id) {
          json& content = last["content"];
          if (content.is_string()) {
            std::string text = content.get<std::string>();
            content = json::array();
            if (text != "(no output)") content.push_back({{"type", "text"}, {"text", text}});
          }
          content.push_back({{"type", "image"},
                             {"source", {{"type", "base64"}, {"media_type", image_media_type(m)}, {"data", m.content}}}});
          continue;
        }
      }
      if (!vision || !is_image_data(m)) {
        add_block("user", {{"type", "text"}, {"text", image_as_text(m)}});
        continue;
      }
      if (m.role == "computer") add_block("user", {{"type", "text"}, {"text", kCodeImageIntro}});
      add_block("user", {{"type", "image"},
                         {"source", {{"type", "base64"}, {"media_type", image_media_type(m)}, {"data", m.content}}}});
      continue;
    }
    std::string text;
    const char* role = "user";
    if (m.role == "user" && m.type == "message") {
      text = m.content;
    } else if (m.role == "assistant") {
      role = "assistant";
      text = m.type == "code" ? fenced(m) : m.content;
    } else if (m.role == "computer" && m.type == "console") {
      text = output_as_user_text(m.content);
    }
    if (text.empty()) continue;
    if (std::string(role) == "user") close_pending();
    add_block(role, {{"type", "text"}, {"text", text}});
  }
  close_pending();
  if (!out.empty() && out.front()["role"] != "user") {
    out.insert(out.begin(), json{{"role", "user"},
                                 {"content", json::array({{{"type", "text"}, {"text", "(earlier messages trimmed)"}}})}});
  }
  return out;
}

}  // namespace oishell::agent
