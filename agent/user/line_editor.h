#pragma once
// The chat prompt's line editor, for a person at a terminal: moving and deleting within the line (arrows, Home/End,
// Ctrl-A/E/B/F/U/K/W/D/L), history (Up/Down, Ctrl-P/N) kept across sessions, and bracketed paste (a pasted block,
// newlines and all, is one message). The terminal is in raw mode only while a line is read, with signals left on,
// so Ctrl-C still interrupts the read as it does elsewhere (interrupt.h). Bytes the user could not have meant as
// text (control characters and escape sequences in a paste) never reach the screen or the line.
#include <optional>
#include <string>
#include <vector>

namespace oishell::agent {

// History as kept in its file: one entry per line, "\\" and newlines escaped, the newest last; at most kLimit.
class LineHistory {
 public:
  static constexpr size_t kLimit = 1000;
  explicit LineHistory(std::string path) : path_(std::move(path)) {}
  // Reads the file (a missing one is an empty history).
  void load();
  // Adds a line (not an empty one, not a repeat of the last, not one starting with a space: as bash's
  // HISTCONTROL=ignoreboth, a way to keep a line out of the file) and appends it to the file (0600).
  void add(const std::string& line);
  const std::vector<std::string>& entries() const { return entries_; }

  static std::string encode(const std::string& line);
  static std::string decode(const std::string& stored);

 private:
  std::string path_;
  std::vector<std::string> entries_;
};

class LineEditor {
 public:
  LineEditor(int in_fd, int out_fd, LineHistory* history) : in_(in_fd), out_(out_fd), history_(history) {}
  // nullopt at end of input (Ctrl-D on an empty line), when a signal interrupted the read (*interrupted true), or
  // when the wake descriptor became readable (woken() true: the line typed so far is kept for the next read).
  std::optional<std::string> read_line(const std::string& prompt, bool* interrupted);
  // A descriptor (-1: none) whose readability ends a read: another source of messages (the web page) has one.
  void set_wake_fd(int fd) { wake_fd_ = fd; }
  bool woken() const { return woken_; }

 private:
  enum class Read { byte, eof, interrupted, woken };
  Read next_byte(unsigned char* c);
  void render(const std::string& prompt);
  void insert(const std::string& text);

  int in_, out_;
  LineHistory* history_;
  int wake_fd_ = -1;
  bool woken_ = false;
  unsigned interrupts_seen_ = 0;  // interrupt::count() when the read began
  std::optional<std::string> held_;  // the line being typed when a wake ended the last read
  std::string pending_;  // bytes read past the end of the last line (typed ahead)
  std::string line_;
  size_t cursor_ = 0;    // byte offset in line_, always at a character boundary
};

}  // namespace oishell::agent
