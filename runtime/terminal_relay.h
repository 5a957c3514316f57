#pragma once
// The supervisor's side of a sandboxed command's terminal (runtime/pty.h): a thread that copies the user's keys to
// the pseudo-terminal's master and the command's output, through TerminalOutputFilter (base/terminal_filter.h),
// to the user's terminal. While it runs the user's terminal is in raw mode (like ssh -t): Ctrl-C, Ctrl-Z and the
// other special keys reach the sandbox's terminal, whose line discipline turns them into signals for the
// command's foreground job. The window size follows the user's terminal (SIGWINCH). At finish() the terminal's
// modes are restored, the modes a full-screen program may have left on are reset, and what arrived meanwhile in
// the input (a late terminal report, keys typed at the very end) is discarded, so that nothing the sandbox set off
// reaches the shell the user returns to.
//
// pause() stops both directions and hands the terminal to the supervisor, for a question only the user may answer
// (a network ask): nothing typed before the question and nothing the command prints can answer or cover it.
#include <termios.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"
#include "base/unique_fd.h"
#include "base/terminal_filter.h"

namespace oishell {

class TerminalRelay {
 public:
  struct Ends {
    int input = -1;   // the user's terminal to read keys from (fd 0 when it is a terminal), or -1
    int output = -1;  // the user's terminal the command's output goes to
  };

  // Puts `ends.input` (when there is one) in raw mode and starts the thread. `master`: from Spawned::terminal.
  [[nodiscard]] static Result<std::unique_ptr<TerminalRelay>> start(UniqueFd master, Ends ends);
  ~TerminalRelay();
  TerminalRelay(const TerminalRelay&) = delete;
  TerminalRelay& operator=(const TerminalRelay&) = delete;

  // Stops relaying, restores the user's terminal's own modes and discards what was typed before this call; returns
  // once the thread no longer touches the terminal. resume() goes back to raw mode and relaying. Nestable.
  void pause();
  void resume();

  // After the command ended: forwards what it wrote before it ended (what its pseudo-terminal holds now), stops
  // the thread and restores the user's terminal (modes, then the output modes a program may have left on, then
  // its input discarded). Idempotent; the destructor calls it.
  void finish();

  // The user's terminal's modes as they were before raw mode (for the asker's cooked read); valid when `input`.
  const termios& saved_modes() const { return saved_; }

 private:
  TerminalRelay(UniqueFd master, Ends ends);
  void run();
  bool pump_output(bool until_empty);  // false: the master is gone (every slave closed)
  void write_out(const std::string& bytes);
  void wake();
  void set_raw(bool raw);

  UniqueFd master_;
  Ends ends_;
  UniqueFd wake_;  // eventfd
  termios saved_{};
  int modes_fd_ = -1;  // the user's terminal whose modes were saved (ends_.input at start), or -1
  TerminalOutputFilter filter_;
  std::string to_master_;  // keys not yet taken by the master (bounded: input is not read while it is full)

  std::mutex mutex_;
  std::condition_variable changed_;
  int pause_depth_ = 0;     // guarded by mutex_
  bool thread_paused_ = false;  // guarded by mutex_: the thread has acknowledged the pause
  bool stopping_ = false;   // guarded by mutex_
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace oishell
