#pragma once
// `oishell run`'s answer to network `ask` questions: the user, at the terminal (/dev/tty) when there is one; deny
// otherwise. The question is the supervisor's own: when the command has a terminal relayed (runtime/
// terminal_relay.h) the relay is paused while it is asked, so nothing the command prints can cover the question and
// nothing typed before it appeared (nor the command's own input) can answer it: the input is flushed, the answer is
// one key (base/answer_key.h; Enter alone is "no"), and only "y" or "a" allow. The host name comes from inside the sandbox and is
// printed escaped (base/terminal_text.h).
#include <memory>
#include <mutex>
#include <string>

#include "runtime/outside/sandbox.h"
#include "runtime/outside/terminal_relay.h"

namespace oishell::cli {

// The answer a line typed at the question means ("y", "yes", "a", "always", any case; anything else: deny).
relay::AskAnswer parse_ask_answer(const std::string& line);

// The questions are read on a thread of their own, started with the first question. Everything that thread uses is
// shared with it (it may outlive the asker, blocked reading the terminal at exit), and it answers a sandbox only
// while that sandbox is attached.
class TerminalAsker {
 public:
  // Opens /dev/tty; without a terminal, handler() is null (the relay then denies unlisted destinations).
  TerminalAsker();
  ~TerminalAsker();
  TerminalAsker(const TerminalAsker&) = delete;
  TerminalAsker& operator=(const TerminalAsker&) = delete;
  relay::AskHandler handler();

  // While it lives, questions are answered to this sandbox; it must end before the sandbox does.
  class Attachment {
   public:
    ~Attachment();
    Attachment(const Attachment&) = delete;
    Attachment& operator=(const Attachment&) = delete;

   private:
    friend class TerminalAsker;
    explicit Attachment(TerminalAsker* asker) : asker_(asker) {}
    TerminalAsker* asker_;
  };
  [[nodiscard]] Attachment attach(Sandbox* sandbox);
  // The command's terminal relay, paused while a question is asked. Null (the default): no relay. Change it only
  // while holding hold_questions().
  void attach_terminal(TerminalRelay* relay);
  // Holds back the next question while the caller changes the terminal's hands (starts or stops the relay).
  [[nodiscard]] std::unique_lock<std::mutex> hold_questions();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace oishell::cli
