#include "agent/acp/acp_display.h"

#include "agent/core/feedback.h"

namespace oishell::agent::acp {
namespace {

using nlohmann::json;

constexpr size_t kMaxOutput = 64 * 1024;  // of a block's output, the tail an editor is sent
constexpr auto kOutputEvery = std::chrono::milliseconds(200);

json text_block(const std::string& text) { return {{"type", "text"}, {"text", text}}; }
json content_item(const std::string& text) { return {{"type", "content"}, {"content", text_block(text)}}; }

std::string mime_of(const std::string& format) {  // "base64.png" -> "image/png"
  const size_t dot = format.rfind('.');
  std::string kind = dot == std::string::npos ? format : format.substr(dot + 1);
  if (kind == "jpg") kind = "jpeg";
  return "image/" + (kind.empty() ? std::string("png") : kind);
}

}  // namespace

json AcpDisplay::running_tool_call() const {
  if (!running_) return nullptr;
  return {{"toolCallId", tool_call_id_}, {"title", "Run " + language_}};
}

void AcpDisplay::update(json update) {
  channel_.notify("session/update", {{"sessionId", session_id_}, {"update", std::move(update)}});
}

void AcpDisplay::text_chunk(const char* kind, const std::string& text) {
  update({{"sessionUpdate", kind}, {"content", text_block(text)}});
}

void AcpDisplay::message_delta(std::string_view text) {
  activity();
  if (std::string shown = prose_.feed(text); !shown.empty()) text_chunk("agent_message_chunk", shown);
}

void AcpDisplay::flush_prose() {
  if (std::string held = prose_.finish(); !held.empty()) text_chunk("agent_message_chunk", held);
}

void AcpDisplay::code_begin(const std::string& language) {
  activity();
  flush_prose();
  tool_call_id_ = "block-" + std::to_string(++blocks_);
  language_ = language;
  code_.clear();
  if (answer_blocks_.size() >= kMaxAnswerBlocks) answer_blocks_.erase(answer_blocks_.begin());
}

void AcpDisplay::code_delta(std::string_view code) {
  activity();
  code_ += code;
}

json AcpDisplay::code_content() const { return content_item(fenced_markdown(language_, code_)); }

void AcpDisplay::code_end() {
  activity();
  answer_blocks_.push_back({tool_call_id_, language_, code_, false});
  update({{"sessionUpdate", "tool_call"},
          {"toolCallId", tool_call_id_},
          {"title", "Run " + language_},
          {"kind", "execute"},
          {"status", "pending"},
          {"content", json::array({code_content()})},
          {"rawInput", {{"language", language_}, {"code", code_}}}});
}

void AcpDisplay::confirmation(const std::string& language, const std::string& code) {
  // The card asked about is the first block of this answer that showed this code and was not asked about yet (with
  // two calls in one answer, not simply the last); none did (a call streamed as other text than it parsed to, a
  // computer action drawn in words): the last block. Either way the request's content is the code that runs, which
  // replaces what the card showed.
  for (ShownBlock& block : answer_blocks_) {
    if (!block.asked && block.language == language && block.code == code) {
      block.asked = true;
      tool_call_id_ = block.id;
      break;
    }
  }
  language_ = language;
  code_ = code;
  confirmation_ = json{{"toolCallId", tool_call_id_},
                       {"title", "Run this " + language + " code in the sandbox?"},
                       {"kind", "execute"},
                       {"status", "pending"},
                       {"content", json::array({code_content()})},
                       {"rawInput", {{"language", language}, {"code", code}}}};
}

void AcpDisplay::console_begin() {
  activity();
  running_ = true;
  output_.clear();
  output_cut_ = false;
  images_ = json::array();
  output_sent_ = std::chrono::steady_clock::now();
  before_ = WorkspaceSnapshot::take(workspace_);
  update({{"sessionUpdate", "tool_call_update"}, {"toolCallId", tool_call_id_}, {"status", "in_progress"}});
}

json AcpDisplay::output_content() const {
  json content = json::array({code_content()});
  if (!output_.empty()) content.push_back(content_item(fenced_markdown("", (output_cut_ ? "...\n" : "") + output_)));
  for (const auto& image : images_) content.push_back({{"type", "content"}, {"content", image}});
  return content;
}

void AcpDisplay::send_output() {
  output_sent_ = std::chrono::steady_clock::now();
  update({{"sessionUpdate", "tool_call_update"}, {"toolCallId", tool_call_id_}, {"content", output_content()}});
}

void AcpDisplay::console_output(std::string_view, std::string_view data) {
  activity();
  output_ += data;
  if (output_.size() > kMaxOutput) {
    output_.erase(0, output_.size() - kMaxOutput);
    output_cut_ = true;
  }
  if (std::chrono::steady_clock::now() - output_sent_ >= kOutputEvery) send_output();
}

void AcpDisplay::image(const std::string& format, const std::string& base64) {
  images_.push_back({{"type", "image"}, {"mimeType", mime_of(format)}, {"data", base64}});
}

void AcpDisplay::console_end(const json& result) {
  activity();
  running_ = false;
  json content = output_content();
  if (before_) {
    const WorkspaceSnapshot after = WorkspaceSnapshot::take(workspace_);
    for (const FileChange& change : workspace_changes(*before_, after)) {
      const std::string path = workspace_ + "/" + change.path;
      if (change.binary || change.too_large) {
        content.push_back(content_item(unified_diff(change)));
      } else {
        content.push_back({{"type", "diff"},
                           {"path", path},
                           {"oldText", change.old_text ? json(*change.old_text) : json(nullptr)},
                           {"newText", change.new_text.value_or("")}});
      }
    }
    if (!after.incomplete().empty()) content.push_back(content_item("(changes not all compared: " + after.incomplete() + ")"));
    before_.reset();
  }
  const std::string status = result.value("status", "ok");
  const bool failed = status != "ok" || result.value("exit_code", 0) != 0;
  update({{"sessionUpdate", "tool_call_update"},
          {"toolCallId", tool_call_id_},
          {"status", failed ? "failed" : "completed"},
          {"content", std::move(content)},
          {"rawOutput", result}});
}

void AcpDisplay::notice(NoticeLevel level, const std::string& text) {
  activity();
  flush_prose();
  const char* label = level == NoticeLevel::error ? "error" : level == NoticeLevel::warning ? "warning" : "note";
  // Every line quoted and no image: a notice may carry what a block printed (an error's text).
  text_chunk("agent_message_chunk", "\n\n" + quoted_markdown(std::string(label) + ": " + text) + "\n\n");
}

void AcpDisplay::host_changes(const std::vector<HostChange>& changes) {
  for (const auto& change : changes) notice(NoticeLevel::warning, describe_host_change(change));
}

void AcpDisplay::replay(const std::vector<Message>& messages) {
  for (const Message& m : messages) {
    if (m.role == "user" && m.type == "message") {
      text_chunk("user_message_chunk", m.content);
    } else if (m.role == "assistant" && m.type == "message") {
      ImageBreaker breaker;
      text_chunk("agent_message_chunk", breaker.feed(m.content) + breaker.finish());
    } else if (m.type == "code") {
      code_begin(m.format);
      code_ = m.content;
      code_end();
    } else if (m.type == "console") {
      output_ = m.content.size() > kMaxOutput ? m.content.substr(m.content.size() - kMaxOutput) : m.content;
      output_cut_ = m.content.size() > kMaxOutput;
      images_ = json::array();
      update({{"sessionUpdate", "tool_call_update"},
              {"toolCallId", tool_call_id_},
              {"status", "completed"},
              {"content", output_content()}});
      output_.clear();
    }
  }
}

}  // namespace oishell::agent::acp
