#include "tools/oishell/run_ask.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace oishell::cli {

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

relay::AskHandler TerminalAsker::handler() {
  if (!tty_) return nullptr;
  thread_ = std::thread([this] { serve(); });
  return [this](const relay::AskRequest& question) {
    std::lock_guard lock(mutex_);
    questions_.push_back(question);
    changed_.notify_all();
  };
}

void TerminalAsker::serve() {
  for (;;) {
    relay::AskRequest question;
    Sandbox* sandbox;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || (sandbox_ && !questions_.empty()); });
      if (stopping_) return;
      question = questions_.front();
      questions_.pop_front();
      sandbox = sandbox_;
    }
    std::string prompt = "\noishell: the sandbox wants to connect to " + question.host + ":" +
                         std::to_string(question.port) + ". Allow? [y]es once, [a]lways, [N]o: ";
    (void)!::write(tty_.get(), prompt.data(), prompt.size());
    char answer[64] = {};
    ssize_t n = ::read(tty_.get(), answer, sizeof answer - 1);
    relay::AskAnswer verdict = relay::AskAnswer::deny;
    if (n > 0 && (answer[0] == 'y' || answer[0] == 'Y')) verdict = relay::AskAnswer::allow_once;
    if (n > 0 && (answer[0] == 'a' || answer[0] == 'A')) verdict = relay::AskAnswer::allow_always;
    sandbox->answer_ask(question.id, verdict);
  }
}

}  // namespace oishell::cli
