#include "agent/user/user_input.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "agent/host/interrupt.h"
#include "base/answer_key.h"

namespace oishell::agent {

std::optional<std::string> LineReader::read_line(bool* interrupted) {
  if (interrupted) *interrupted = false;
  woken_ = false;
  const unsigned seen = interrupts_seen_.value_or(interrupt::count());
  while (true) {
    auto nl = buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    if (eof_) {
      if (buf_.empty()) return std::nullopt;
      return std::exchange(buf_, std::string());
    }
    const interrupt::Ready ready = interrupt::wait_readable(fd_, wake_fd_, seen);
    if (ready == interrupt::Ready::interrupted) {
      if (interrupted) *interrupted = true;
      return std::nullopt;
    }
    if (ready == interrupt::Ready::other) {
      woken_ = true;
      return std::nullopt;
    }
    char chunk[4096];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) {
        if (interrupted) *interrupted = true;
        return std::nullopt;
      }
      eof_ = true;
      continue;
    }
    if (n == 0) {
      eof_ = true;
      continue;
    }
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

TerminalInput::TerminalInput(bool json_mode, std::string history_path)
    : json_mode_(json_mode), stdin_reader_(STDIN_FILENO) {
  if (::isatty(STDIN_FILENO) == 1) {
    questions_ = &stdin_reader_;
    if (!json_mode_) {
      history_ = std::make_unique<LineHistory>(std::move(history_path));
      history_->load();
      editor_ = std::make_unique<LineEditor>(STDIN_FILENO, STDOUT_FILENO, history_.get());
    }
  } else {
    tty_.reset(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
    if (tty_) {
      tty_reader_.emplace(tty_.get());
      questions_ = &*tty_reader_;
    } else if (json_mode_) {
      questions_ = &stdin_reader_;
    }
  }
}

void TerminalInput::set_wake_fd(int fd) {
  stdin_reader_.set_wake_fd(fd);
  if (tty_reader_) tty_reader_->set_wake_fd(fd);
  if (editor_) editor_->set_wake_fd(fd);
}

void TerminalInput::show(const std::string& prompt) {
  if (prompt.empty()) return;
  FILE* out = json_mode_ ? stderr : stdout;
  if (tty_ && !json_mode_) {
    [[maybe_unused]] ssize_t n = ::write(tty_.get(), prompt.data(), prompt.size());
    return;
  }
  std::fputs(prompt.c_str(), out);
  std::fflush(out);
}

std::optional<std::string> TerminalInput::read_message(const std::string& prompt, bool* interrupted) {
  if (editor_ && ::isatty(STDOUT_FILENO) == 1) {
    std::fflush(stdout);
    auto line = editor_->read_line(prompt, interrupted);
    woken_ = editor_->woken();
    return line;
  }
  if (::isatty(STDIN_FILENO) == 1) show(prompt);
  auto line = stdin_reader_.read_line(interrupted);
  woken_ = stdin_reader_.woken();
  return line;
}

std::optional<std::string> TerminalInput::ask(const std::string& question, bool* interrupted) {
  if (interrupted) *interrupted = false;
  woken_ = false;
  if (!questions_) return std::nullopt;
  if (::isatty(questions_->fd()) == 1) {
    questions_->discard_buffered();
    ::tcflush(questions_->fd(), TCIFLUSH);
  }
  show(question);
  auto answer = questions_->read_line(interrupted);
  woken_ = questions_->woken();
  return answer;
}

std::optional<std::string> TerminalInput::ask_key(const std::string& question, std::string_view keys,
                                                  bool* interrupted) {
  if (interrupted) *interrupted = false;
  woken_ = false;
  if (!questions_ || json_mode_ || ::isatty(questions_->fd()) != 1) return ask(question, interrupted);
  const int fd = questions_->fd();
  SingleKeyMode single_key(fd);
  if (!single_key.active()) return ask(question, interrupted);
  questions_->discard_buffered();
  ::tcflush(fd, TCIFLUSH);
  show(question);
  const unsigned seen = interrupt::count();
  bool was_interrupted = false;
  const WaitReadable poll_fd = poll_readable(fd);
  auto key = read_answer_key(fd, keys, [&](int timeout_ms) {
    if (timeout_ms >= 0) return poll_fd(timeout_ms);  // the rest of a word typed whole: no question is open
    switch (interrupt::wait_readable(fd, questions_->wake_fd(), seen)) {
      case interrupt::Ready::fd: return true;
      case interrupt::Ready::interrupted: was_interrupted = true; return false;
      case interrupt::Ready::other: woken_ = true; return false;
      case interrupt::Ready::error: return false;
    }
    return false;
  });
  if (was_interrupted || interrupt::count() != seen) {
    if (interrupted) *interrupted = true;
    show("\n");
    return std::nullopt;
  }
  if (!key) {
    show("\n");
    return std::nullopt;
  }
  show(*key == '\n' ? std::string("\n") : std::string(1, *key) + "\n");
  return *key == '\n' ? std::string() : std::string(1, *key);
}

}  // namespace oishell::agent
