#include "agent/gui/gui_display.h"

namespace oishell::agent::gui {

using nlohmann::json;

void GuiDisplay::user_message(const std::string& text) { publish({{"type", "user"}, {"text", text}}); }

void GuiDisplay::waiting(bool on) {
  if (on) answer_blocks_.clear();  // a new answer: its blocks are the ones its questions are about
  if (on == waiting_) return;
  waiting_ = on;
  publish({{"type", "waiting"}, {"on", on}});
}

void GuiDisplay::message_delta(std::string_view text) {
  waiting(false);
  publish({{"type", "message_delta"}, {"text", text}});
}

void GuiDisplay::code_begin(const std::string& language) {
  waiting(false);
  block_ = ++blocks_;
  block_ran_ = false;
  if (answer_blocks_.size() >= kMaxAnswerBlocks) answer_blocks_.erase(answer_blocks_.begin());
  answer_blocks_.push_back({block_, language, "", false});
  publish({{"type", "code_begin"}, {"block", block_}, {"language", language}});
}

void GuiDisplay::code_delta(std::string_view code) {
  if (!answer_blocks_.empty() && answer_blocks_.back().id == block_) answer_blocks_.back().code += code;
  publish({{"type", "code_delta"}, {"block", block_}, {"text", code}});
}

void GuiDisplay::code_end() { publish({{"type", "code_end"}, {"block", block_}}); }

void GuiDisplay::answer_end() {
  waiting(false);
  publish({{"type", "answer_end"}});
}

void GuiDisplay::console_begin() {
  if (block_ran_) block_ = ++blocks_;  // a block the model did not write (`%% command`)
  block_ran_ = true;
  output_sent_ = 0;
  output_cut_ = false;
  if (!workspace_.empty()) before_ = WorkspaceSnapshot::take(workspace_);
  publish({{"type", "console_begin"}, {"block", block_}});
}

void GuiDisplay::console_output(std::string_view stream, std::string_view data) {
  if (output_cut_) return;
  const size_t room = kMaxBlockOutput - output_sent_;
  const bool cut = data.size() > room;
  if (cut) data = data.substr(0, room);
  output_sent_ += data.size();
  if (!data.empty()) publish({{"type", "output"}, {"block", block_}, {"stream", stream}, {"text", data}});
  if (cut) {
    output_cut_ = true;
    publish({{"type", "output_cut"}, {"block", block_}, {"shown_bytes", kMaxBlockOutput}});
  }
}

void GuiDisplay::image(const std::string& format, const std::string& base64) {
  publish({{"type", "image"}, {"block", block_}, {"format", format}, {"base64", base64}});
}

void GuiDisplay::console_end(const json& result) {
  publish({{"type", "console_end"}, {"block", block_}, {"result", result}});
  if (!before_) return;
  const WorkspaceSnapshot after = WorkspaceSnapshot::take(workspace_);
  json files = json::array();
  for (const FileChange& change : workspace_changes(*before_, after)) {
    const char* kind = change.kind == FileChange::Kind::created    ? "created"
                       : change.kind == FileChange::Kind::deleted ? "deleted"
                                                                  : "modified";
    files.push_back({{"path", change.path},
                     {"kind", kind},
                     {"summary", describe_change(change)},
                     {"binary", change.binary},
                     {"too_large", change.too_large},
                     {"old_size", change.old_size},
                     {"new_size", change.new_size},
                     {"diff", unified_diff(change)}});
  }
  before_.reset();
  if (files.empty() && after.incomplete().empty()) return;
  publish({{"type", "changes"}, {"block", block_}, {"files", files}, {"incomplete", after.incomplete()}});
}

void GuiDisplay::confirmation(const std::string& language, const std::string& code) {
  // The block asked about (and then run) is the first of this answer that showed this code and was not asked about
  // yet: with two calls in one answer, not simply the last. None did: the last block (a computer action drawn in
  // words), which the page then shows with this code.
  for (AnswerBlock& block : answer_blocks_) {
    if (!block.asked && block.language == language && block.code == code) {
      block.asked = true;
      block_ = block.id;
      block_ran_ = false;
      break;
    }
  }
  publish({{"type", "confirmation"}, {"block", block_}, {"language", language}, {"code", code}});
}

void GuiDisplay::notice(NoticeLevel level, const std::string& text) {
  if (text.empty()) return;
  const char* name = level == NoticeLevel::error ? "error" : level == NoticeLevel::warning ? "warning" : "info";
  publish({{"type", "notice"}, {"level", name}, {"text", text}});
}

void GuiDisplay::host_changes(const std::vector<HostChange>& changes) {
  json list = json::array();
  for (const auto& c : changes) {
    list.push_back({{"kind", c.kind == HostChange::Kind::repository ? "repository" : "protected_path"},
                    {"path", c.path},
                    {"found", c.found},
                    {"action", c.action}});
  }
  publish({{"type", "host_changes"}, {"changes", list}});
}

void GuiDisplay::sandbox_event(const json& event) { publish({{"type", "sandbox_event"}, {"event", event}}); }

void GuiDisplay::conversation_loaded(const std::vector<Message>& messages) {
  json list = json::array();
  for (const auto& m : messages) list.push_back(to_json(m));
  block_ran_ = true;
  publish({{"type", "conversation"}, {"messages", list}});
}

}  // namespace oishell::agent::gui
