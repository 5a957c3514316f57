#pragma once
// The supervisor's side of a sandboxed command's terminal (runtime/inside/pty.h): the user's keys go to the pseudo-
// terminal's master, and the command's output, through TerminalOutputFilter (base/terminal_filter.h), to the
// user's terminal. While it runs the user's terminal is in raw mode (like ssh -t): Ctrl-C, Ctrl-Z and the other
// special keys reach the sandbox's terminal, whose line discipline turns them into signals for the command's
// foreground job. The window size follows the user's terminal (SIGWINCH). At finish() the terminal's modes are
// restored, the modes a full-screen program may have left on are reset, and what arrived meanwhile in the input (a
// late terminal report, keys typed at the very end) is discarded, so that nothing the sandbox set off reaches the
// shell the user returns to.
//
// It has no thread: the sandbox's monitor serves it (Sandbox::set_monitor_client), on the thread that waits for the
// command. (A thread of its own made `oishell run` on a terminal 0.6 ms slower: the first thread of a process makes
// every later change of its address space a cross-CPU TLB flush.) It never blocks that thread: it reads and writes
// the user's terminal through descriptions of its own opened non-blocking (the user's shell shares the originals),
// with bounded buffers: when the user's terminal does not take output, the command's output waits in its
// pseudo-terminal, and the command blocks, as on any terminal.
//
// pause() stops both directions and hands the terminal back to its own modes, for a question only the user may
// answer (a network ask): nothing typed before the question and nothing the command prints can answer or cover it.
#include <poll.h>
#include <termios.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/terminal_filter.h"
#include "base/unique_fd.h"
#include "runtime/outside/sandbox.h"

namespace oishell {

class TerminalRelay final : public MonitorClient {
 public:
  struct Ends {
    int input = -1;   // the user's terminal to read keys from (fd 0 when it is a terminal), or -1
    int output = -1;  // the user's terminal the command's output goes to
  };

  // Puts `ends.input` (when there is one) in raw mode. `master`: from Spawned::terminal. `wake`: makes the monitor
  // ask for the descriptors again (Sandbox::wake_monitor), after a pause ends or a window change.
  [[nodiscard]] static Result<std::unique_ptr<TerminalRelay>> start(UniqueFd master, Ends ends,
                                                                    std::function<void()> wake);
  ~TerminalRelay() override;
  TerminalRelay(const TerminalRelay&) = delete;
  TerminalRelay& operator=(const TerminalRelay&) = delete;

  // MonitorClient: on the monitor's thread.
  void add_pollfds(std::vector<pollfd>& fds) override;
  void on_pollfds(const pollfd* fds, size_t count) override;

  // From any thread. pause() stops relaying, restores the user's terminal's own modes and discards what was typed
  // before the call; when it returns the monitor no longer touches the terminal. resume() goes back to raw mode and
  // relaying. Nestable.
  void pause();
  void resume();

  // After the command ended (and the monitor stopped serving this): forwards what it wrote before it ended (what its
  // pseudo-terminal holds now), then restores the user's terminal (modes; the output modes a program may have left
  // on, when it sent escape sequences at all; its input discarded). Idempotent; the destructor calls it.
  void finish();

  static constexpr size_t kMaxPendingInput = 64 * 1024;    // keys the command has not taken; input waits beyond
  static constexpr size_t kMaxPendingOutput = 256 * 1024;  // output the terminal has not taken; the command waits

 private:
  TerminalRelay(UniqueFd master, Ends ends, std::function<void()> wake);
  Status open_ends();
  void set_raw(bool raw);
  bool read_master();  // false: the master is gone (every slave closed)
  void write_output();
  void read_input();
  void write_master();
  void forward_window_size();

  UniqueFd master_;
  Ends ends_;
  UniqueFd input_;   // a non-blocking description of ends_.input (or invalid: ends_.input itself is used)
  UniqueFd output_;  // a non-blocking description of ends_.output (or invalid: ends_.output itself is used)
  int in_fd_ = -1;
  int out_fd_ = -1;
  bool output_blocking_ = false;  // no non-blocking description could be opened: small writes after POLLOUT
  UniqueFd winch_read_, winch_write_;
  std::function<void()> wake_;
  termios saved_{};
  int modes_fd_ = -1;  // the user's terminal whose modes were saved (ends_.input at start), or -1

  std::mutex mutex_;  // everything below; held while the terminal is touched
  TerminalOutputFilter filter_;
  std::string to_master_;
  std::string to_output_;
  bool master_open_ = true;
  bool escapes_forwarded_ = false;  // the output had escape sequences (then modes are reset at the end)
  int pause_depth_ = 0;
  bool finished_ = false;
  size_t polled_ = 0;  // how many descriptors add_pollfds() appended last (0 while paused)
};

}  // namespace oishell
