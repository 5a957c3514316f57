#include "agent/llm/key_prompt.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace oishell::agent {
namespace {

// Echo off on a terminal for the life of the object; the old settings come back on every path out.
class EchoOff {
 public:
  explicit EchoOff(int fd) : fd_(fd) {
    if (::tcgetattr(fd_, &saved_) != 0) return;
    termios quiet = saved_;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    quiet.c_lflag |= ECHONL;  // the Enter still moves to the next line
    active_ = ::tcsetattr(fd_, TCSAFLUSH, &quiet) == 0;
  }
  ~EchoOff() {
    if (active_) ::tcsetattr(fd_, TCSAFLUSH, &saved_);
  }
  bool active() const { return active_; }
  EchoOff(const EchoOff&) = delete;
  EchoOff& operator=(const EchoOff&) = delete;

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

void write_all(int fd, const std::string& text) {
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

std::optional<std::string> read_secret_line(const std::string& prompt) {
  UniqueFd tty(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (!tty) return std::nullopt;
  EchoOff quiet(tty.get());
  if (!quiet.active()) return std::nullopt;  // never read a key with echo on
  write_all(tty.get(), prompt);
  std::string line;
  while (true) {
    char c;
    ssize_t n = ::read(tty.get(), &c, 1);
    if (n < 0 && errno == EINTR) return std::nullopt;  // Ctrl-C (SIGINT without SA_RESTART)
    if (n <= 0) return std::nullopt;
    if (c == '\n' || c == '\r') break;
    if (line.size() < 4096) line.push_back(c);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  while (!line.empty() && line.front() == ' ') line.erase(0, 1);
  return line;
}

std::optional<std::string> ask_for_api_key(const std::string& variable, const std::string& model, Display& display,
                                           UserInput& input, const KeyStore& store) {
  display.notice(NoticeLevel::info,
                 variable + " not found.\n"
                 "To use `" + model + "` (the default model) please provide an OpenAI API key. It is used for this "
                 "session only, and never enters the sandbox.\n"
                 "To use another language model, run `interpreter --local` or give --model (see --help).");
  display.flush();
  auto key = read_secret_line("OpenAI API key: ");
  if (!key || key->empty()) return std::nullopt;
  display.notice(NoticeLevel::info, "OpenAI API key received (" + std::to_string(key->size()) + " characters).");
  bool interrupted = false;
  display.before_question();
  auto answer = input.ask("Save it for later sessions in " + store.path(variable) +
                              " (readable only by you)? [y/N] ",
                          &interrupted);
  std::string a = answer ? *answer : "";
  while (!a.empty() && (a.back() == ' ' || a.back() == '\r')) a.pop_back();
  if (!interrupted && (a == "y" || a == "Y" || a == "yes" || a == "Yes")) {
    Status s = store.save(variable, *key);
    display.notice(s.is_ok() ? NoticeLevel::info : NoticeLevel::error,
                   s.is_ok() ? "Saved in " + store.path(variable) +
                                   " (mode 0600). Later sessions use it when " + variable +
                                   " is not set; delete the file to forget it."
                             : s.message());
  } else {
    display.notice(NoticeLevel::info,
                   "Not saved. To keep it for later sessions, put `export " + variable +
                       "=your_api_key` in your shell's start-up file (~/.bashrc, ~/.zshrc) and open a new terminal.");
  }
  return key;
}

}  // namespace oishell::agent
