#include "tools/oishell/run_ask.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>
#include <thread>

#include "base/answer_key.h"
#include "base/terminal_text.h"
#include "base/unique_fd.h"

namespace oishell::cli {

relay::AskAnswer parse_ask_answer(const std::string& line) {
  std::string word;
  for (char c : line) {
    if (!std::isspace(static_cast<unsigned char>(c))) word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (word == "y" || word == "yes") return relay::AskAnswer::allow_once;
  if (word == "a" || word == "always") return relay::AskAnswer::allow_always;
  return relay::AskAnswer::deny;
}

struct TerminalAsker::State {
  UniqueFd tty;
  std::mutex mutex;
  std::mutex asking;  // held while a question is on the terminal
  std::condition_variable changed;
  std::deque<relay::AskRequest> questions;
  Sandbox* sandbox = nullptr;      // answered only while attached (under mutex)
  TerminalRelay* terminal = nullptr;  // changed only under asking
  bool stopping = false;
  std::thread thread;
  std::mutex modes_mutex;
  std::optional<termios> modes_to_restore;  // set while a question holds the terminal in single-key mode
};

namespace {

// The answer, one key at the terminal (base/answer_key.h): what was typed before the question is discarded first.
// While the question is open its terminal modes are kept in `state` for the asker's destructor (a run that ends
// while the user has not answered leaves the terminal as it found it).
relay::AskAnswer read_answer(TerminalAsker::State& state) {
  const int tty = state.tty.get();
  SingleKeyMode single_key(tty);
  if (single_key.active()) {
    std::lock_guard lock(state.modes_mutex);
    state.modes_to_restore = single_key.saved();
  }
  (void)::tcflush(tty, TCIFLUSH);
  auto key = read_answer_key(tty, "yan", poll_readable(tty));
  {
    std::lock_guard lock(state.modes_mutex);
    state.modes_to_restore.reset();
  }
  const std::string echo = key && *key != '\n' ? std::string(1, *key) + "\r\n" : "\r\n";
  (void)!::write(tty, echo.data(), echo.size());
  return key ? parse_ask_answer(std::string(1, *key)) : relay::AskAnswer::deny;
}

// The question thread: it owns a share of the state, so it may outlive the asker (blocked reading the terminal).
void serve(const std::shared_ptr<TerminalAsker::State>& state) {
  for (;;) {
    relay::AskRequest question;
    {
      std::unique_lock lock(state->mutex);
      state->changed.wait(lock, [&] { return state->stopping || (state->sandbox && !state->questions.empty()); });
      if (state->stopping) return;
      question = state->questions.front();
      state->questions.pop_front();
    }
    std::lock_guard asking(state->asking);
    TerminalRelay* terminal = state->terminal;  // as it is now that no one changes it
    if (terminal) terminal->pause();
    // A new line, attributes and character set reset (the command may have left them invisible or garbled).
    std::string prompt = "\r\n\x1b[0m\x0foishell: the sandbox wants to connect to " +
                         escape_for_terminal(question.host) + ":" + std::to_string(question.port) +
                         ". Allow? [y]es once, [a]lways, [N]o: ";
    (void)!::write(state->tty.get(), prompt.data(), prompt.size());
    relay::AskAnswer verdict = read_answer(*state);
    if (terminal) terminal->resume();
    // The sandbox may have ended while the user typed: answer only one still attached (answering only queues).
    std::lock_guard lock(state->mutex);
    if (state->sandbox && !state->stopping) state->sandbox->answer_ask(question.id, verdict);
  }
}

}  // namespace

TerminalAsker::TerminalAsker() : state_(std::make_shared<State>()) {
  state_->tty.reset(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
}

TerminalAsker::~TerminalAsker() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    state_->sandbox = nullptr;
  }
  state_->changed.notify_all();
  // A question being read from the terminal cannot be interrupted portably; that thread keeps its share of the
  // state and ends with the process. The terminal's modes go back as they were now.
  {
    std::lock_guard lock(state_->modes_mutex);
    if (state_->modes_to_restore) (void)::tcsetattr(state_->tty.get(), TCSANOW, &*state_->modes_to_restore);
  }
  if (state_->thread.joinable()) state_->thread.detach();
}

TerminalAsker::Attachment TerminalAsker::attach(Sandbox* sandbox) {
  {
    std::lock_guard lock(state_->mutex);
    state_->sandbox = sandbox;
  }
  state_->changed.notify_all();
  return Attachment(this);
}

TerminalAsker::Attachment::~Attachment() {
  std::lock_guard lock(asker_->state_->mutex);
  asker_->state_->sandbox = nullptr;
}

void TerminalAsker::attach_terminal(TerminalRelay* relay) { state_->terminal = relay; }

std::unique_lock<std::mutex> TerminalAsker::hold_questions() { return std::unique_lock(state_->asking); }

relay::AskHandler TerminalAsker::handler() {
  if (!state_->tty) return nullptr;
  // The thread starts with the first question (on the relay's thread), not with every run: a process's first
  // thread makes each later change of its address space a cross-CPU TLB flush (docs/performance.md).
  return [state = state_](const relay::AskRequest& question) {
    std::lock_guard lock(state->mutex);
    if (state->stopping) return;
    if (!state->thread.joinable()) state->thread = std::thread([state] { serve(state); });
    state->questions.push_back(question);
    state->changed.notify_all();
  };
}

}  // namespace oishell::cli
