#pragma once
// Runs a program on a pseudo-terminal of the test's own, as a user at a terminal would (forkpty): the test plays
// the terminal. It reads what reaches the terminal, types into it, resizes it, and inspects the terminal itself
// (its modes, its line discipline, its input queue) through the slave side, which it keeps open.
#include <sys/types.h>
#include <termios.h>

#include <chrono>
#include <string>
#include <vector>

namespace oishell::test {

class PtyRun {
 public:
  // Starts `argv` (argv[0] an absolute path) with the terminal as its stdin, stdout, stderr and controlling
  // terminal, `rows` x `cols`.
  PtyRun(const std::vector<std::string>& argv, unsigned short rows = 24, unsigned short cols = 80);
  ~PtyRun();  // kills and reaps the program if it still runs
  PtyRun(const PtyRun&) = delete;
  PtyRun& operator=(const PtyRun&) = delete;

  // Reads what reaches the terminal until `needle` has appeared in all output so far (true), or the timeout.
  bool wait_for(const std::string& needle, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Reads until the program exits (or the timeout: then killed); returns its exit status (128+N for signal N).
  int wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  void type(const std::string& keys);
  // Resizes the terminal (the kernel sends SIGWINCH to its foreground process group).
  void resize(unsigned short rows, unsigned short cols);

  const std::string& output() const { return output_; }
  // The terminal's modes and line discipline now, and how many typed bytes wait in its input queue.
  termios modes() const;
  int line_discipline() const;
  int pending_input() const;

 private:
  void pump(int timeout_ms);
  int master_ = -1;
  int slave_ = -1;  // kept open so the terminal can be inspected after the program is gone
  pid_t pid_ = -1;
  int status_ = -1;
  std::string output_;
};

}  // namespace oishell::test
