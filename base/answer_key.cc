#include "base/answer_key.h"

#include <poll.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

namespace oishell {

SingleKeyMode::SingleKeyMode(int fd) : fd_(fd) {
  if (::isatty(fd) != 1 || ::tcgetattr(fd, &saved_) != 0) return;
  termios raw = saved_;
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  active_ = ::tcsetattr(fd, TCSANOW, &raw) == 0;
}

SingleKeyMode::~SingleKeyMode() {
  if (active_) (void)::tcsetattr(fd_, TCSANOW, &saved_);
}

namespace {

// One byte; nullopt at end of input, on an error, or when a signal interrupted the read.
std::optional<char> read_byte(int fd) {
  char c;
  return ::read(fd, &c, 1) == 1 ? std::optional<char>(c) : std::nullopt;
}

constexpr char kCtrlD = 0x04;
constexpr int kTrailMs = 150;  // how long after the key the rest of a word typed whole may come

}  // namespace

std::optional<char> read_answer_key(int fd, std::string_view keys, const WaitReadable& wait) {
  char answer = 0;
  while (!answer) {
    if (!wait(-1)) return std::nullopt;
    auto c = read_byte(fd);
    if (!c || *c == kCtrlD) return std::nullopt;
    if (*c == '\r' || *c == '\n') return '\n';
    char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    if (keys.find(lower) != std::string_view::npos) answer = lower;
  }
  // "yes", "always" and an Enter typed right after the key belong to this answer.
  while (wait(kTrailMs)) {
    auto c = read_byte(fd);
    if (!c || *c == '\r' || *c == '\n' || !std::isalpha(static_cast<unsigned char>(*c))) break;
  }
  return answer;
}

WaitReadable poll_readable(int fd) {
  return [fd](int timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    for (;;) {
      int n = ::poll(&p, 1, timeout_ms);
      if (n < 0 && errno == EINTR) continue;
      return n > 0;
    }
  };
}

}  // namespace oishell
