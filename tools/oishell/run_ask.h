#pragma once
// `oishell run`'s answer to network `ask` questions: the terminal (/dev/tty) when there is one, deny otherwise.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "base/unique_fd.h"
#include "runtime/sandbox.h"

namespace oishell::cli {

class TerminalAsker {
 public:
  // Opens /dev/tty; without a terminal, handler() is null (the relay then denies unlisted destinations).
  TerminalAsker();
  ~TerminalAsker();
  relay::AskHandler handler();
  void attach(Sandbox* sandbox);

 private:
  void serve();
  UniqueFd tty_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<relay::AskRequest> questions_;
  Sandbox* sandbox_ = nullptr;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace oishell::cli
