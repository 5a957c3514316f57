#pragma once
// A Display that turns what the agent shows into ACP `session/update` notifications:
//   prose                      -> agent_message_chunk
//   a code block               -> tool_call (kind execute, the code as rawInput and as a fenced block), pending
//   the block running          -> tool_call_update in_progress, its output (at most every 200 ms, the last 64 KiB)
//   the block's end            -> tool_call_update completed or failed, with the files it created, changed or
//                                 deleted in the workspace as `diff` items (agent/sandbox/workspace_changes.h)
//   notices and host changes   -> agent_message_chunk, quoted ("> warning: ...")
// Text from the sandbox is passed as it came: an editor renders it as text, not on a terminal.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/acp/rpc_channel.h"
#include "agent/core/display.h"
#include "agent/core/message.h"
#include "base/markdown_fence.h"
#include "agent/sandbox/workspace_changes.h"

namespace oishell::agent::acp {

class AcpDisplay final : public Display {
 public:
  AcpDisplay(RpcChannel& channel, std::string workspace) : channel_(channel), workspace_(std::move(workspace)) {}

  // The directory whose files a block's diffs are taken of.
  void set_workspace(std::string workspace) { workspace_ = std::move(workspace); }
  // Updates from now on are for this session.
  void set_session(const std::string& session_id) { session_id_ = session_id; }
  // Called at every display call and tick while a turn runs (the server re-raises a cancel there).
  void set_on_activity(std::function<void()> on_activity) { on_activity_ = std::move(on_activity); }
  // The block that awaits confirmation (after confirmation()), as a ToolCallUpdate; nullopt when none.
  std::optional<nlohmann::json> take_confirmation() { return std::exchange(confirmation_, std::nullopt); }
  // The file offered for writing before the keep question, as ACP diff content ({type: diff, path, oldText,
  // newText}); once.
  std::optional<nlohmann::json> take_proposed_file() { return std::exchange(proposed_file_, std::nullopt); }
  // The block that runs now (a network ask is about it): {toolCallId, title}; null when none runs.
  nlohmann::json running_tool_call() const;

  void user_message(const std::string&) override {}
  void waiting(bool on) override {
    activity();
    if (on) answer_blocks_.clear();  // a new answer: its blocks are the ones its questions are about
  }
  void tick() override { activity(); }
  void message_delta(std::string_view text) override;
  void code_begin(const std::string& language) override;
  void code_delta(std::string_view code) override;
  void code_end() override;
  void answer_end() override {
    activity();
    flush_prose();
  }
  void console_begin() override;
  void console_output(std::string_view stream, std::string_view data) override;
  void active_line(int) override {}
  void image(const std::string& format, const std::string& base64) override;
  void console_end(const nlohmann::json& result) override;
  void confirmation(const std::string& language, const std::string& code) override;
  void notice(NoticeLevel level, const std::string& text) override;
  void proposed_file(const std::string& path, const std::optional<std::string>& before,
                     const std::string& after) override {
    proposed_file_ = nlohmann::json{{"type", "diff"}, {"path", path},
                                    {"oldText", before ? nlohmann::json(*before) : nlohmann::json()},
                                    {"newText", after}};
  }
  void host_changes(const std::vector<HostChange>& changes) override;
  void host_changes_summary(const std::vector<HostChange>&) override {}
  void before_question() override {}
  bool interactive() const override { return false; }
  void flush() override {}

  // The session's history as updates (session/load): user and assistant messages, code blocks as completed tool
  // calls with their output.
  void replay(const std::vector<Message>& messages);

 private:
  void activity() {
    if (on_activity_) on_activity_();
  }
  void update(nlohmann::json update);
  void text_chunk(const char* kind, const std::string& text);
  void flush_prose();  // what the prose's image breaker held back, before anything else is shown
  nlohmann::json code_content() const;  // the block's code, fenced
  nlohmann::json output_content() const;
  void send_output();

  RpcChannel& channel_;
  std::string workspace_;
  std::string session_id_;
  std::function<void()> on_activity_;
  // The model's prose reaches the editor with its images drawn as text: an editor that renders markdown would fetch
  // a remote image, a way out the sandbox's policy never sees (base/markdown_fence.h).
  ImageBreaker prose_;
  uint64_t blocks_ = 0;
  std::string tool_call_id_;  // the block being streamed or run
  std::string language_, code_;
  std::string output_;  // its output, the last kMaxOutput bytes
  bool output_cut_ = false;
  bool running_ = false;
  std::chrono::steady_clock::time_point output_sent_{};
  std::optional<WorkspaceSnapshot> before_;
  std::optional<nlohmann::json> confirmation_;
  std::optional<nlohmann::json> proposed_file_;
  // The blocks of the answer being handled, so that a confirmation names the card of its own code.
  struct ShownBlock {
    std::string id, language, code;
    bool asked = false;
  };
  static constexpr size_t kMaxAnswerBlocks = 64;
  std::vector<ShownBlock> answer_blocks_;
  nlohmann::json images_ = nlohmann::json::array();
};

}  // namespace oishell::agent::acp
