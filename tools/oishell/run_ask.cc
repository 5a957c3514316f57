#include "tools/oishell/run_ask.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

#include "base/terminal_text.h"

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

TerminalAsker::TerminalAsker() : tty_(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)) {}

TerminalAsker::~TerminalAsker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  // A question being read from the terminal cannot be interrupted portably; leave that thread to process exit.
  if (thread_.joinable()) thread_.detach();
}

void TerminalAsker::attach(Sandbox* sandbox) {
  std::lock_guard lock(mutex_);
  sandbox_ = sandbox;
  changed_.notify_all();
}

void TerminalAsker::attach_terminal(TerminalRelay* relay) {
  std::lock_guard lock(mutex_);
  terminal_ = relay;
}

relay::AskHandler TerminalAsker::handler() {
  if (!tty_) return nullptr;
  // The thread starts with the first question (on the relay's thread), not with every run: a process's first
  // thread makes each later change of its address space a cross-CPU TLB flush (docs/performance.md).
  return [this](const relay::AskRequest& question) {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable() && !stopping_) thread_ = std::thread([this] { serve(); });
    questions_.push_back(question);
    changed_.notify_all();
  };
}

// One line from the terminal in its own (cooked) modes: what was typed before the question is discarded first.
std::string TerminalAsker::read_answer() {
  termios modes;
  bool cooked_forced = false;
  if (::tcgetattr(tty_.get(), &modes) == 0 && !(modes.c_lflag & ICANON)) {
    termios cooked = modes;
    cooked.c_lflag |= ICANON | ECHO;
    cooked_forced = ::tcsetattr(tty_.get(), TCSADRAIN, &cooked) == 0;
  }
  (void)::tcflush(tty_.get(), TCIFLUSH);
  std::string line;
  char c;
  while (line.size() < 256) {
    ssize_t n = ::read(tty_.get(), &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n' || c == '\r') break;
    line.push_back(c);
  }
  if (cooked_forced) (void)::tcsetattr(tty_.get(), TCSADRAIN, &modes);
  return line;
}

void TerminalAsker::serve() {
  for (;;) {
    relay::AskRequest question;
    Sandbox* sandbox;
    TerminalRelay* terminal;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || (sandbox_ && !questions_.empty()); });
      if (stopping_) return;
      question = questions_.front();
      questions_.pop_front();
      sandbox = sandbox_;
      terminal = terminal_;
    }
    std::lock_guard asking(asking_);
    {
      std::lock_guard lock(mutex_);
      terminal = terminal_;  // as it is now that no one changes it
    }
    if (terminal) terminal->pause();
    // A new line, attributes and character set reset (the command may have left them invisible or garbled).
    std::string prompt = "\r\n\x1b[0m\x0foishell: the sandbox wants to connect to " +
                         escape_for_terminal(question.host) + ":" + std::to_string(question.port) +
                         ". Allow? [y]es once, [a]lways, [N]o (then Enter): ";
    (void)!::write(tty_.get(), prompt.data(), prompt.size());
    relay::AskAnswer verdict = parse_ask_answer(read_answer());
    if (terminal) terminal->resume();
    sandbox->answer_ask(question.id, verdict);
  }
}

}  // namespace oishell::cli
