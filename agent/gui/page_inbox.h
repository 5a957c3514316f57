#pragma once
// What the web page sends the agent, from the server's threads to the agent's: messages for the chat, answers to
// the question on screen, and Stop. message_fd() is readable while a message waits, ask_fd() while an answer or a
// Stop for the open question does (eventfds), so the agent can wait for the terminal and the page at once
// (agent/gui/gui_input.h).
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::agent::gui {

class PageInbox {
 public:
  static Result<std::unique_ptr<PageInbox>> create();
  int message_fd() const { return messages_fd_.get(); }
  int ask_fd() const { return ask_fd_.get(); }

  // From the page. A message waits for the prompt (at most kMaxQueued; false when full).
  static constexpr size_t kMaxQueued = 64;
  bool push_message(std::string text);
  // The answer to question `ask_id`; false when that question is not the one open.
  bool answer(uint64_t ask_id, std::string text);
  // Stop: interrupts the question open (the caller also stops what runs). False when the agent is at its prompt
  // (nothing to stop: the prompt is not ended from the page).
  bool stop();

  // From the agent.
  std::optional<std::string> take_message();
  void set_at_prompt(bool at_prompt);
  void open_ask(uint64_t ask_id);
  // The page's answer to the open question, or nullopt; *stopped when Stop came instead.
  std::optional<std::string> take_answer(bool* stopped);
  void close_ask();

 private:
  PageInbox(UniqueFd messages, UniqueFd ask) : messages_fd_(std::move(messages)), ask_fd_(std::move(ask)) {}
  // With the lock held: each eventfd readable exactly while something waits behind it.
  void settle();

  UniqueFd messages_fd_, ask_fd_;
  mutable std::mutex mutex_;
  std::deque<std::string> messages_;
  bool at_prompt_ = false;
  uint64_t ask_id_ = 0;  // the open question (0: none)
  std::optional<std::string> answer_;
  bool stopped_ = false;
};

}  // namespace oishell::agent::gui
