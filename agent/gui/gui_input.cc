#include "agent/gui/gui_input.h"

#include "agent/host/interrupt.h"
#include "agent/sandbox/policy_keep.h"

namespace oishell::agent::gui {

using nlohmann::json;

json question_options(const std::string& question) {
  auto option = [](const char* answer, const char* label) { return json{{"answer", answer}, {"label", label}}; };
  // agent/core/loop.cc's, agent/core/run_block.cc's and agent/user/magic.cc's questions.
  if (question.find("Would you like to run this code?") != std::string::npos) {
    return json::array({option("y", "Run"), option("n", "Skip")});
  }
  if (question.starts_with("code wants to reach ")) {
    return json::array({option("o", "Allow once"), option("a", "Allow always"), option("d", "Deny")});
  }
  if (question.find("Apply them for this session?") != std::string::npos) {
    return json::array({option("y", "Apply"), option("n", "No")});
  }
  if (question == kKeepQuestion) return json::array({option("y", "Write it"), option("n", "Don't write")});
  return json::array();
}

std::string question_for_page(const std::string& question) {
  std::string text = question;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n')) text.erase(0, 1);
  if (text.starts_with("Would you like to run this code?")) return "Run this code?";
  if (text.starts_with("code wants to reach ")) {
    std::string destination = text.substr(20);
    destination = destination.substr(0, destination.find(" \xE2\x80\x94 "));  // up to " — allow (o)nce..."
    return "Code in the sandbox wants to reach " + destination + ". Allow it?";
  }
  if (question == kKeepQuestion) return "Write this rule (the diff above), so that later sessions allow it too?";
  return text;
}

void GuiInput::publish_status() {
  if (!status_source_) return;
  json status = status_source_();
  if (status == status_shown_) return;
  status_shown_ = status;
  json event = status;
  event["type"] = "status";
  hub_.publish(std::move(event));
}

std::optional<std::string> GuiInput::read_message(const std::string& prompt, bool* interrupted) {
  if (interrupted) *interrupted = false;
  const unsigned seen = interrupt::count();  // a Ctrl-C from now on ends the wait, whichever read is under way
  terminal_.set_interrupts_seen(seen);     // the terminal's reads below, one per wake: none loses a Ctrl-C between
  inbox_.set_at_prompt(true);
  publish_status();
  hub_.publish({{"type", "state"}, {"busy", false}});
  auto done = [this](std::optional<std::string> message) {
    terminal_.set_interrupts_seen(std::nullopt);
    inbox_.set_at_prompt(false);
    if (message) hub_.publish({{"type", "state"}, {"busy", true}});
    return message;
  };
  while (true) {
    if (auto message = inbox_.take_message()) {
      if (!terminal_ended_) terminal_display_.notice(NoticeLevel::info, prompt + *message + "   (sent from the page)");
      return done(std::move(message));
    }
    if (terminal_ended_) {
      if (interrupt::wait_readable(inbox_.message_fd(), -1, seen) != interrupt::Ready::fd) {
        if (interrupted) *interrupted = true;
        return done(std::nullopt);
      }
      continue;
    }
    terminal_.set_wake_fd(inbox_.message_fd());
    auto line = terminal_.read_message(prompt, interrupted);
    terminal_.set_wake_fd(-1);
    if (interrupted && *interrupted) return done(std::nullopt);
    if (terminal_.woken()) continue;
    if (!line && !terminal_.at_terminal()) {  // a pipe or a file ended: the page goes on alone
      terminal_ended_ = true;
      terminal_display_.notice(NoticeLevel::info, "The input ended: the page drives the session now (Ctrl-C here "
                                                  "ends it).");
      continue;
    }
    return done(std::move(line));  // a line, or Ctrl-D at the terminal: the session ends
  }
}

std::optional<std::string> GuiInput::ask(const std::string& question, bool* interrupted) {
  if (interrupted) *interrupted = false;
  const unsigned seen = interrupt::count();
  const uint64_t id = ++asks_;
  inbox_.open_ask(id);
  hub_.publish({{"type", "ask"}, {"id", id}, {"question", question_for_page(question)},
                {"options", question_options(question)}});
  std::optional<std::string> answer;
  const char* by = "terminal";
  bool stopped = false;
  bool terminal_answers = terminal_.can_ask();
  if (!terminal_answers) {  // nobody can type the answer here: say where it is awaited
    terminal_display_.notice(NoticeLevel::info, question_for_page(question) + "   (waiting for the answer on the page)");
  }
  while (true) {
    bool page_stopped = false;
    if (auto from_page = inbox_.take_answer(&page_stopped)) {
      answer = std::move(from_page);
      by = "page";
      if (terminal_answers) terminal_display_.notice(NoticeLevel::info, *answer + "   (answered on the page)");
      break;
    }
    if (page_stopped) {
      stopped = true;
      by = "page";
      break;
    }
    if (!terminal_answers) {
      if (interrupt::wait_readable(inbox_.ask_fd(), -1, seen) != interrupt::Ready::fd) {
        stopped = true;
        break;
      }
      continue;
    }
    terminal_.set_wake_fd(inbox_.ask_fd());
    bool terminal_interrupted = false;
    auto typed = terminal_.ask(question, &terminal_interrupted);
    terminal_.set_wake_fd(-1);
    if (terminal_interrupted) {
      stopped = true;
      break;
    }
    if (terminal_.woken()) continue;
    if (!typed) {  // the terminal's input ended: the page answers
      terminal_answers = false;
      terminal_display_.notice(NoticeLevel::info, "   (waiting for the answer on the page)");
      continue;
    }
    answer = std::move(typed);
    break;
  }
  inbox_.close_ask();
  hub_.publish({{"type", "ask_done"}, {"id", id}, {"answer", answer ? json(*answer) : json(nullptr)}, {"by", by}});
  if (stopped) {
    if (interrupted) *interrupted = true;
    return std::nullopt;
  }
  return answer;
}

}  // namespace oishell::agent::gui
