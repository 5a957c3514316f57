#include "agent/terminal/terminal_display.h"

#include <unistd.h>

namespace oishell::agent {
namespace {
constexpr const char* kDim = "\033[2m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kReset = "\033[0m";
constexpr const char* kFrames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
}  // namespace

TerminalDisplay::TerminalDisplay(FILE* out, bool colour, bool spinner, bool interactive, bool verbose)
    : out_(out), colour_(colour), spinner_enabled_(spinner), interactive_(interactive), verbose_(verbose) {}

void TerminalDisplay::write(std::string_view s) {
  if (s.empty()) return;
  clear_spinner();
  std::fwrite(s.data(), 1, s.size(), out_);
  // Track the cursor column, ignoring escape sequences (they never end in '\n').
  at_line_start_ = s.back() == '\n';
  if (!at_line_start_ && s.size() >= 4 && s.back() == 'm') {
    size_t esc = s.rfind('\033');
    if (esc != std::string_view::npos && esc > 0 && s.find_first_not_of("\033[0123456789;m", esc) == std::string_view::npos) {
      at_line_start_ = s[esc - 1] == '\n';
    }
  }
  std::fflush(out_);
}

void TerminalDisplay::end_line() {
  if (!at_line_start_) write("\n");
}

void TerminalDisplay::clear_spinner() {
  if (!spinning_) return;
  spinning_ = false;
  std::fputs("\r\033[K", out_);
}

void TerminalDisplay::user_message(const std::string&) {}

void TerminalDisplay::waiting(bool on) {
  if (!on) {
    clear_spinner();
    std::fflush(out_);
    return;
  }
  if (!spinner_enabled_) return;
  end_line();
  spinning_ = true;
  frame_ = 0;
  tick();
}

void TerminalDisplay::tick() {
  if (!spinning_) return;
  std::fprintf(out_, "\r%s%s%s", kDim, kFrames[frame_++ % 10], kReset);
  std::fflush(out_);
}

void TerminalDisplay::message_delta(std::string_view text) {
  write(colour_ ? markdown_.feed(text) : std::string(text));
}

void TerminalDisplay::code_begin(const std::string& language) {
  write(colour_ ? markdown_.finish() : "");
  end_line();
  code_language_ = language.empty() ? "python" : language;
  if (colour_) {
    write(std::string(kDim) + "─── " + code_language_ + " " + kReset + "\n");
    highlighter_.emplace(code_language_);
  } else {
    write("```" + language + "\n");
  }
}

void TerminalDisplay::code_delta(std::string_view code) {
  write(highlighter_ ? highlighter_->feed(code) : std::string(code));
}

void TerminalDisplay::code_end() {
  if (highlighter_) {
    write(highlighter_->finish());
    highlighter_.reset();
  }
  end_line();
  write(colour_ ? std::string(kDim) + "───" + kReset + "\n" : "```\n");
}

void TerminalDisplay::answer_end() {
  if (colour_) write(markdown_.finish());
  end_line();
}

void TerminalDisplay::console_begin() { end_line(); }

void TerminalDisplay::console_output(std::string_view stream, std::string_view data) {
  if (colour_ && stream == "stderr") {
    write(std::string(kRed) + std::string(data) + kReset);
  } else {
    write(data);
  }
}

void TerminalDisplay::active_line(int) {}

void TerminalDisplay::image(const std::string& format, const std::string& base64) {
  end_line();
  write("[image: " + format + ", " + std::to_string(base64.size() * 3 / 4) + " bytes]\n");
}

void TerminalDisplay::console_end(const nlohmann::json& result) {
  end_line();
  std::string status = result.value("status", "ok");
  int code = result.value("exit_code", 0);
  if (status == "ok" && code == 0 && !verbose_) return;
  std::string line = status == "ok" || status == "error" ? "exit status " + std::to_string(code) : status;
  if (verbose_) line += " (" + std::to_string(result.value("duration_ms", 0)) + " ms)";
  write(colour_ ? std::string(kDim) + "[" + line + "]" + kReset + "\n" : "[" + line + "]\n");
}

void TerminalDisplay::confirmation(const std::string&, const std::string&) {}

void TerminalDisplay::notice(NoticeLevel level, const std::string& text) {
  end_line();
  const char* colour = level == NoticeLevel::error ? kRed : level == NoticeLevel::warning ? kYellow : kDim;
  if (colour_) write(std::string(colour) + text + kReset + "\n");
  else write(text + "\n");
}

void TerminalDisplay::flush() {
  clear_spinner();
  std::fflush(out_);
}

}  // namespace oishell::agent
