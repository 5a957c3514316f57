#pragma once
// With --gui the session is driven from the terminal and the page at once: a message comes from whichever the user
// uses first (a line half typed at the terminal stays there for later), and a question (run this code? allow this
// connection?) is answered by whichever answers first. The page sees the question as buttons; the terminal is told
// when the page answered. When the terminal's input ends (a pipe, /dev/null, a closed terminal), the page alone
// drives the session; Ctrl-C at the prompt still ends it, and closing the page does not.
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/core/display.h"
#include "agent/gui/event_hub.h"
#include "agent/gui/page_inbox.h"
#include "agent/user/user_input.h"

namespace oishell::agent::gui {

// The buttons for a question the agent asks (the loop's and the sandbox's words): [{"answer", "label"}], empty for
// a question answered in words.
nlohmann::json question_options(const std::string& question);
// The question in the page's words: without the terminal's key hints ("(y/n/e)", "(o)nce / (a)lways / (d)eny").
std::string question_for_page(const std::string& question);

class GuiInput final : public UserInput {
 public:
  // `terminal_display`: where the terminal is told what came from the page.
  GuiInput(TerminalInput& terminal, Display& terminal_display, PageInbox& inbox, EventHub& hub)
      : terminal_(terminal), terminal_display_(terminal_display), inbox_(inbox), hub_(hub) {}

  // Called at each prompt: what the page's header shows (model, sandbox, policy, auto_run); published when changed.
  void set_status_source(std::function<nlohmann::json()> source) { status_source_ = std::move(source); }

  std::optional<std::string> read_message(const std::string& prompt, bool* interrupted) override;
  std::optional<std::string> ask(const std::string& question, bool* interrupted) override;
  bool can_ask() const override { return true; }  // the page can answer, even when it is opened later

 private:
  // Waits for the page alone; false on Ctrl-C.
  bool wait_for_page();
  void publish_status();

  TerminalInput& terminal_;
  Display& terminal_display_;
  PageInbox& inbox_;
  EventHub& hub_;
  std::function<nlohmann::json()> status_source_;
  nlohmann::json status_shown_;
  bool terminal_ended_ = false;
  uint64_t asks_ = 0;
};

}  // namespace oishell::agent::gui
