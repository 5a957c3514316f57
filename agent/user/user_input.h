#pragma once
// Reading what the user types: the chat prompt, y/n/e confirmations and network `ask` answers. Reads are plain
// read(2) calls, so a Ctrl-C (SIGINT without SA_RESTART) interrupts them and the caller learns about it.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "agent/user/line_editor.h"
#include "base/unique_fd.h"

namespace oishell::agent {

class UserInput {
 public:
  virtual ~UserInput() = default;
  // The next line of the conversation (stdin). nullopt at end of input, or when Ctrl-C interrupted the read.
  virtual std::optional<std::string> read_message(const std::string& prompt, bool* interrupted) = 0;
  // An answer to a question; nullopt when nobody can answer (no terminal) or on Ctrl-C / end of input.
  virtual std::optional<std::string> ask(const std::string& question, bool* interrupted) = 0;
  virtual bool can_ask() const = 0;
  // An answer that is one of `keys` (lower-case letters): at a terminal, the key alone answers (Enter alone: "");
  // elsewhere the line typed, as ask() reads it.
  virtual std::optional<std::string> ask_key(const std::string& question, std::string_view keys, bool* interrupted) {
    (void)keys;
    return ask(question, interrupted);
  }
};

// Reads lines from a file descriptor, keeping what follows the line for the next read.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // nullopt at end of input, on a signal (*interrupted), or when the wake descriptor became readable (woken()).
  std::optional<std::string> read_line(bool* interrupted);
  int fd() const { return fd_; }
  void set_wake_fd(int fd) { wake_fd_ = fd; }
  int wake_fd() const { return wake_fd_; }
  // The interrupt count a read compares with (interrupt::wait_readable): a Ctrl-C counted after it ends the read.
  // Unset, each read takes the count when it starts; a caller that reads more than once for one wait sets it, so
  // that a Ctrl-C between two reads is not lost.
  void set_interrupts_seen(std::optional<unsigned> seen) { interrupts_seen_ = seen; }
  bool woken() const { return woken_; }
  // Forgets what was read past the last line returned.
  void discard_buffered() { buf_.clear(); }

 private:
  int fd_;
  int wake_fd_ = -1;
  std::optional<unsigned> interrupts_seen_;
  bool woken_ = false;
  std::string buf_;
  bool eof_ = false;
};

// Messages from stdin; questions from the terminal (stdin when it is one, else /dev/tty), else — in --json
// mode — from stdin, else nobody can answer. Prompts go to stderr in --json mode, stdout otherwise.
// Before a question on a terminal, its pending input is discarded (tcflush, and what the reader holds): only what is
// typed after the question answers it, not keys pressed while a block ran (perhaps at the block's own prompt) or
// what the terminal typed in reply to a report request in the block's output.
// At a terminal (stdin a tty, not --json), messages are read with the line editor (agent/user/line_editor.h) and its
// history, kept in `history_path` (empty: not kept).
class TerminalInput final : public UserInput {
 public:
  explicit TerminalInput(bool json_mode, std::string history_path = {});
  std::optional<std::string> read_message(const std::string& prompt, bool* interrupted) override;
  std::optional<std::string> ask(const std::string& question, bool* interrupted) override;
  // At a terminal (not --json): the terminal in single-key mode (base/answer_key.h), restored before it returns.
  std::optional<std::string> ask_key(const std::string& question, std::string_view keys, bool* interrupted) override;
  bool can_ask() const override { return questions_ != nullptr; }
  // A descriptor (-1: none) whose readability ends a read of a message or an answer, which then returns nullopt
  // with woken() true: another source (the web page, agent/gui/gui_input.h) has the message or the answer.
  void set_wake_fd(int fd);
  // LineReader::set_interrupts_seen for messages read from a pipe or a file (not the line editor's keys).
  void set_interrupts_seen(std::optional<unsigned> seen) { stdin_reader_.set_interrupts_seen(seen); }
  bool woken() const { return woken_; }
  // Whether messages come from a person at a terminal (the line editor), not a pipe or a file.
  bool at_terminal() const { return editor_ != nullptr; }

 private:
  void show(const std::string& prompt);

  bool json_mode_;
  LineReader stdin_reader_;
  UniqueFd tty_;
  std::optional<LineReader> tty_reader_;
  LineReader* questions_ = nullptr;
  std::unique_ptr<LineHistory> history_;
  std::unique_ptr<LineEditor> editor_;  // set when messages come from a terminal
  bool woken_ = false;
};

}  // namespace oishell::agent
