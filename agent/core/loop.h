#pragma once
// The agent loop: system prompt -> stream the model's answer -> confirm (unless auto_run) -> run each block in
// the sandbox with its output shown live -> feed output, exit status and denials back -> until the model answers
// without code, --max_turns, an error, or Ctrl-C. Ctrl-C while the model streams stops it and returns to the
// prompt; Ctrl-C while a block runs stops the block (the model is told) and a second returns to the prompt.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/core/conversation.h"
#include "agent/core/display.h"
#include "agent/sandbox/executor.h"
#include "agent/llm/client.h"
#include "agent/llm/cost.h"
#include "agent/core/message.h"
#include "agent/user/user_input.h"

namespace oishell::agent {

enum class TurnEnd { done, interrupted, error, max_turns, declined, no_model, budget };

struct AgentParts {
  AgentConfig config;
  std::unique_ptr<LlmClient> llm;  // null: no model configured (only % commands work)
  Executor* executor = nullptr;
  Display* display = nullptr;
  UserInput* input = nullptr;
  ConversationStore* store = nullptr;  // null: not saved
  std::vector<Message> history;        // a resumed conversation
};

class Agent {
 public:
  explicit Agent(AgentParts parts);

  // One user message to the end of the model's work (with --loop, until the model says a loop breaker; a Ctrl-C,
  // an error or --max_turns, counted over the whole loop, stop it too).
  TurnEnd respond(const std::string& user_text);
  // The interactive chat until end of input (or Ctrl-C at the prompt). Returns the process exit status.
  int chat();

  // For magic commands and tests.
  std::vector<Message>& messages() { return messages_; }
  AgentConfig& config() { return parts_.config; }
  Executor& executor() { return *parts_.executor; }
  Display& display() { return *parts_.display; }
  UserInput& input() { return *parts_.input; }
  LlmClient* llm() { return parts_.llm.get(); }
  ConversationStore* store() { return parts_.store; }
  // What the session's model calls have cost so far.
  const CostMeter& cost() const { return cost_; }
  // The context window and the tokens kept for the answer, for the model in use.
  size_t context_window();
  size_t answer_reserve();
  std::string system_prompt();
  std::vector<std::string> languages();
  void save();
  void append(Message m);
  // Runs `code` and shows its output (for `%% cmd`); returns the output fed to the model, were it asked. The images
  // the block displayed (as the executor sent them) wait in take_block_images() until the next block.
  std::string run_block(const std::string& language, const std::string& code, const std::string& call_id,
                        bool* stop_turn);
  // Shows (and does not yet tell the model) what the sandbox reported while no block ran; the next block's feedback
  // carries it. Never waits.
  void poll_sandbox();
  // `%policy allow|deny HOST[:PORT]`: the running sandbox's network policy changed (a supervisor `policy` request
  // without its op), the outcome shown to the user. No restart: the executors keep their state.
  // Shows what changed or why nothing did; true when the change took effect.
  bool change_policy(const nlohmann::json& request);
  // An "allow always" answer for `rule` ("HOST:PORT"): the diff of the policy file that would keep it for later
  // sessions shown, and written only on a yes (agent/sandbox/policy_keep.h).
  void offer_to_keep(const std::string& rule);
  std::vector<Message> take_block_images() { return std::exchange(block_images_, {}); }
  // The `computer` tool's screen when --os is on and the model calls tools; nullopt otherwise.
  std::optional<ComputerScreen> computer_screen() const;
  // The harness profile's tools, when the profile has one and the model calls tools; null otherwise.
  const Harness* harness() const;
  // The sandbox's denials of this session, in order (for %policy learn); forget them once acted on.
  const std::vector<nlohmann::json>& session_denials() const { return session_denials_; }
  void forget_session_denials() { session_denials_.clear(); }
  // Shuts the sandbox down, showing what it reports then, after repeating the session's host-change warnings when
  // a later block's output may have covered them. The model is not told (the session is over).
  void end_session();
  // Explains how to configure a model (the screen shown when none is configured).
  void show_no_model_help();

 private:
  enum class Confirm { run, skip, stop };
  Confirm confirm(Message* code);
  TurnEnd one_model_turn(bool* ran_code, unsigned interrupts_at_start);
  // The images the user's message names (agent/llm/prompt_images.h), read and added after it.
  void attach_prompt_images(const std::string& user_text);
  // Model turns until the model answers without code; *turns counts them against --max_turns.
  TurnEnd run_turns(int* turns);
  // Multi-line input: a line starting with """ (or ``` with --multi_line) opens it, a line ending with the same
  // closes it. read_multi_line() reads the rest into *text; false at end of input with nothing typed.
  static std::optional<std::string> opens_multi_line(const std::string& line, bool fences);
  bool read_multi_line(const std::string& delimiter, std::string* text);
  // --loop: the model's last message says one of the loop breakers.
  bool loop_should_stop() const;
  void show_host_changes(const std::vector<HostChange>& changes);
  // The user's answers to network questions during a block, shown again after it (agent/core/run_block.cc).
  void show_answers(const std::vector<std::string>& answers);
  // After the model's last turn for a message: the session's host changes again, if a block ran after one was
  // last shown.
  void end_turn();

  AgentParts parts_;
  std::vector<Message> messages_;
  CostMeter cost_;
  std::vector<Message> block_images_;  // the last block's images ({"role": "computer", "type": "image", ...})
  bool save_warned_ = false;
  std::vector<HostChange> host_changes_shown_;  // this session's, in the order shown
  bool warnings_may_be_hidden_ = false;         // a block ran after they were last shown
  std::vector<nlohmann::json> session_denials_;
  std::set<std::string> paths_explained_;  // fs.denied: "access path", shown to the user once a session
};

}  // namespace oishell::agent
