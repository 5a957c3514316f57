#pragma once
// A Display that publishes what the agent shows as events for the web page (agent/gui/event_hub.h):
//   {"type": "user", "text"}                            the user's message (typed at the terminal or on the page)
//   {"type": "waiting", "on"}                           waiting for the model
//   {"type": "message_delta", "text"}                   the answer's prose as it streams
//   {"type": "code_begin"|"code_delta"|"code_end", "block", "language"|"text"}
//   {"type": "answer_end"}
//   {"type": "console_begin", "block"}                  a block runs in the sandbox
//   {"type": "output", "block", "stream", "text"}       its output (the first kMaxBlockOutput bytes; then one
//                                                       {"type": "output_cut", "block"})
//   {"type": "image", "block", "format", "base64"}
//   {"type": "console_end", "block", "result"}
//   {"type": "changes", "block", "files": [{path, kind, summary, diff, binary, too_large}], "incomplete"}
//                                                       what the block created, changed or deleted in the workspace
//   {"type": "confirmation", "block", "language", "code"}
//   {"type": "notice", "level", "text"}, {"type": "host_changes", "changes"}, {"type": "sandbox_event", "event"}
//   {"type": "conversation", "messages"}                the conversation was replaced by a saved one
// Text from the sandbox is passed as it came: the page shows it as text, never as markup.
#include <optional>
#include <string>
#include <vector>

#include "agent/core/display.h"
#include "agent/gui/event_hub.h"
#include "agent/sandbox/workspace_changes.h"

namespace oishell::agent::gui {

class GuiDisplay final : public Display {
 public:
  static constexpr size_t kMaxBlockOutput = 2 * 1024 * 1024;

  // `workspace`: the directory whose files each block's changes are taken of ("" : none taken).
  GuiDisplay(EventHub& hub, std::string workspace) : hub_(hub), workspace_(std::move(workspace)) {}

  void user_message(const std::string& text) override;
  void waiting(bool on) override;
  void message_delta(std::string_view text) override;
  void code_begin(const std::string& language) override;
  void code_delta(std::string_view code) override;
  void code_end() override;
  void answer_end() override;
  void console_begin() override;
  void console_output(std::string_view stream, std::string_view data) override;
  void active_line(int) override {}
  void image(const std::string& format, const std::string& base64) override;
  void console_end(const nlohmann::json& result) override;
  void confirmation(const std::string& language, const std::string& code) override;
  void notice(NoticeLevel level, const std::string& text) override;
  void host_changes(const std::vector<HostChange>& changes) override;
  void host_changes_summary(const std::vector<HostChange>&) override {}
  void sandbox_event(const nlohmann::json& event) override;
  void conversation_loaded(const std::vector<Message>& messages) override;
  void before_question() override {}
  bool interactive() const override { return false; }
  void flush() override {}

 private:
  void publish(nlohmann::json event) { hub_.publish(std::move(event)); }

  EventHub& hub_;
  std::string workspace_;
  uint64_t blocks_ = 0;  // ids handed out
  uint64_t block_ = 0;   // the block shown or run now
  // The blocks of the answer being handled, so that a confirmation names the block of its own code.
  struct AnswerBlock {
    uint64_t id;
    std::string language, code;
    bool asked = false;
  };
  static constexpr size_t kMaxAnswerBlocks = 64;
  std::vector<AnswerBlock> answer_blocks_;
  bool block_ran_ = true;  // the current block's console has begun (a new console_begin is a new block: `%%`)
  size_t output_sent_ = 0;
  bool output_cut_ = false;
  bool waiting_ = false;
  std::optional<WorkspaceSnapshot> before_;
};

}  // namespace oishell::agent::gui
