#pragma once
// `oishell run`'s answer to network `ask` questions: the user, at the terminal (/dev/tty) when there is one; deny
// otherwise. The question is the supervisor's own: when the command has a terminal relayed (runtime/
// terminal_relay.h) the relay is paused while it is asked, so nothing the command prints can cover the question and
// nothing typed before it appeared (nor the command's own input) can answer it: the input is flushed, the answer is
// a whole line, and only "y"/"yes" or "a"/"always" allow. The host name comes from inside the sandbox and is
// printed escaped (base/terminal_text.h).
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "base/unique_fd.h"
#include "runtime/sandbox.h"
#include "runtime/terminal_relay.h"

namespace oishell::cli {

// The answer a line typed at the question means ("y", "yes", "a", "always", any case; anything else: deny).
relay::AskAnswer parse_ask_answer(const std::string& line);

class TerminalAsker {
 public:
  // Opens /dev/tty; without a terminal, handler() is null (the relay then denies unlisted destinations).
  TerminalAsker();
  ~TerminalAsker();
  relay::AskHandler handler();
  void attach(Sandbox* sandbox);
  // The command's terminal relay, paused while a question is asked. Null (the default): no relay.
  void attach_terminal(TerminalRelay* relay);
  // Holds back the next question while the caller changes the terminal's hands (starts or stops the relay).
  [[nodiscard]] std::unique_lock<std::mutex> hold_questions() { return std::unique_lock(asking_); }

 private:
  void serve();
  std::string read_answer();
  UniqueFd tty_;
  std::mutex mutex_;
  std::mutex asking_;  // held while a question is on the terminal
  std::condition_variable changed_;
  std::deque<relay::AskRequest> questions_;
  Sandbox* sandbox_ = nullptr;
  TerminalRelay* terminal_ = nullptr;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace oishell::cli
