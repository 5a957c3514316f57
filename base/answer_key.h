#pragma once
// A question answered with one key at a terminal: `[y]es once, [a]lways, [N]o` takes the letter as it is pressed,
// and Enter alone takes the default, as before. Used by `oishell run`'s network question (tools/oishell/run_ask.h)
// and the agent's (agent/user/user_input.h).
#include <termios.h>

#include <functional>
#include <optional>
#include <string_view>

namespace oishell {

// The terminal `fd` in non-canonical mode without echo while it lives (one key is one read; signals as they were:
// at a cooked terminal Ctrl-C still signals), its modes restored by the destructor on every return. active() is false when `fd` is not a
// terminal or its modes could not be changed: then read lines as before.
class SingleKeyMode {
 public:
  explicit SingleKeyMode(int fd);
  ~SingleKeyMode();
  SingleKeyMode(const SingleKeyMode&) = delete;
  SingleKeyMode& operator=(const SingleKeyMode&) = delete;
  bool active() const { return active_; }
  // The modes to put back (for a process that must restore them from elsewhere, e.g. when it exits mid-question).
  const termios& saved() const { return saved_; }

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

// Waits until the descriptor is readable or `timeout_ms` (-1: no limit) passed: true when readable, false to give
// up (timeout, interrupt, another source answered).
using WaitReadable = std::function<bool(int timeout_ms)>;

// Reads an answer from `fd` (in SingleKeyMode): the first key that is one of `keys` (lower case; the key is matched
// in either case) is the answer, returned in lower case; Enter returns '\n' (the default answer). Other keys are
// ignored. What follows the key within a moment (the rest of a word typed whole, "yes", and its Enter) is read and
// dropped, so it cannot answer the next question or reach the next prompt. nullopt: end of input (or Ctrl-D), a
// read error, or `wait` gave up.
std::optional<char> read_answer_key(int fd, std::string_view keys, const WaitReadable& wait);

// A WaitReadable that only polls `fd`.
WaitReadable poll_readable(int fd);

}  // namespace oishell
