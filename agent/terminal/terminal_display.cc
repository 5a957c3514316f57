#include "agent/terminal/terminal_display.h"

#include <unistd.h>

#include "agent/core/feedback.h"
#include "base/terminal_text.h"

namespace oishell::agent {
namespace {
constexpr const char* kDim = "\033[2m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kBoldYellow = "\033[1;33m";
constexpr const char* kDisplayReset = "\033[0m";
// The agent's marks: reverse video, cells with a background. Block output cannot draw one (the inline filter drops
// SGR 7 and every background colour, base/terminal_filter.h), and the model's text cannot either (escaped; the
// highlighter's reverse video holds only an escape such as \u{200b}, never a label), so a line that starts with
// one is the agent's.
constexpr const char* kMarkQuestion = "\033[0;1;7m";     // bold reverse: the terminal's own colours swapped
constexpr const char* kMarkWarning = "\033[0;1;7;33m";   // on yellow
constexpr const char* kMarkError = "\033[0;1;7;31m";     // on red
constexpr const char* kFrames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
// The rest of a styled text and what the styler still holds, in that order (the two operands of a `+` may be
// evaluated in either order, and finish() first would put what it holds before the rest).
template <typename Styler>
std::string styled_to_end(Styler& styler, std::string_view rest) {
  std::string out = styler.feed(rest);
  return out + styler.finish();
}

}  // namespace

TerminalDisplay::TerminalDisplay(FILE* out, bool colour, bool spinner, bool interactive, bool verbose)
    : out_(out),
      colour_(colour),
      spinner_enabled_(spinner),
      interactive_(interactive),
      verbose_(verbose),
      marks_(colour || interactive) {}

void TerminalDisplay::write(std::string_view s) {
  if (s.empty()) return;
  clear_spinner();
  std::fwrite(s.data(), 1, s.size(), out_);
  written_ += s.size();
  at_line_start_ = scan_output(s, at_line_start_).line_start;  // escape sequences do not move it
  std::fflush(out_);
}

std::string TerminalDisplay::mark(const char* style, std::string_view label) const {
  if (!marks_) return {};
  return std::string(style) + " " + std::string(label) + " " + kDisplayReset + " ";
}

void TerminalDisplay::end_line() {
  if (!at_line_start_) write("\n");
}

void TerminalDisplay::reset_terminal() {
  TerminalEffect effect = std::exchange(output_effect_, TerminalEffect::none);
  if (effect == TerminalEffect::in_line) write(kResetColours);
  if (effect == TerminalEffect::other) write(kResetTerminal);
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
  answering_ = true;
  if (!spinner_enabled_) return;
  end_line();
  spinning_ = true;
  frame_ = 0;
  tick();
}

void TerminalDisplay::tick() {
  if (!spinning_) return;
  std::fprintf(out_, "\r%s%s%s", kDim, kFrames[frame_++ % 10], kDisplayReset);
  std::fflush(out_);
}

void TerminalDisplay::message_delta(std::string_view text) {
  std::string safe = model_text_.feed(text, EmojiJoiners::kept);  // prose: read, never run
  write(colour_ ? markdown_.feed(safe) : safe);
}

void TerminalDisplay::code_begin(const std::string& language) {
  std::string rest = model_text_.finish(EmojiJoiners::kept);
  write(colour_ ? styled_to_end(markdown_, rest) : rest);
  end_line();
  code_language_ = escape_for_terminal(language.empty() ? "python" : language);
  block_ = {language.empty() ? "python" : language, "", answering_};
  if (colour_) {
    write(std::string(kDim) + "─── " + code_language_ + " " + kDisplayReset + "\n");
    highlighter_.emplace(code_language_);
  } else {
    write("```" + escape_for_terminal(language) + "\n");
  }
}

void TerminalDisplay::code_delta(std::string_view code) {
  block_.code += code;
  std::string safe = model_text_.feed(code);
  write(highlighter_ ? highlighter_->feed(safe) : safe);
}

void TerminalDisplay::code_end() {
  std::string rest = model_text_.finish();
  if (highlighter_) {
    write(styled_to_end(*highlighter_, rest));
    highlighter_.reset();
  } else {
    write(rest);
  }
  end_line();
  write(colour_ ? std::string(kDim) + "───" + kDisplayReset + "\n" : "```\n");
  written_at_block_end_ = written_;
}

void TerminalDisplay::answer_end() {
  answering_ = false;
  std::string rest = model_text_.finish(EmojiJoiners::kept);
  write(colour_ ? styled_to_end(markdown_, rest) : rest);
  end_line();
}

void TerminalDisplay::console_begin() {
  end_line();
  (void)console_filter_.finish_stdout();  // a block that ended without console_end() leaves nothing behind
  (void)console_filter_.finish_stderr();
}

void TerminalDisplay::console_output(std::string_view stream, std::string_view data) {
  std::string safe = console_filter_.feed(stream, data);
  if (safe.empty()) return;
  TerminalEffect effect = scan_output(safe, true).effect;
  if (effect > output_effect_) output_effect_ = effect;
  if (colour_ && stream == "stderr") {
    write(std::string(kRed) + safe + kDisplayReset);
  } else {
    write(safe);
  }
}

void TerminalDisplay::active_line(int) {}

void TerminalDisplay::image(const std::string& format, const std::string& base64) {
  end_line();
  write("[image: " + escape_for_terminal(format) + ", " + std::to_string(base64.size() * 3 / 4) + " bytes]\n");
}

void TerminalDisplay::console_end(const nlohmann::json& result) {
  console_output("stdout", "");
  std::string rest_out = console_filter_.finish_stdout(), rest_err = console_filter_.finish_stderr();
  for (const std::string* rest : {&rest_out, &rest_err}) {
    TerminalEffect effect = scan_output(*rest, true).effect;
    if (effect > output_effect_) output_effect_ = effect;
    write(*rest);
  }
  reset_terminal();
  end_line();
  std::string status = escape_for_terminal(result.value("status", "ok"));
  int code = result.value("exit_code", 0);
  if (status == "ok" && code == 0 && !verbose_) return;
  std::string line = status == "ok" || status == "error" ? "exit status " + std::to_string(code) : status;
  if (verbose_) line += " (" + std::to_string(result.value("duration_ms", 0)) + " ms)";
  write(colour_ ? std::string(kDim) + "[" + line + "]" + kDisplayReset + "\n" : "[" + line + "]\n");
}

void TerminalDisplay::confirmation(const std::string& language, const std::string& code) {
  // The question is about exactly this code, so it is what the user reads right above the question. The block
  // already there will do when nothing came after it and it is this code: drawn as it streamed and equal to it, or
  // drawn by the agent from the parsed call after the answer ended (a computer action, a harness call). Otherwise
  // (two calls in one answer, prose after the call, a streamed text that parsed differently) it is drawn again.
  const std::string lang = language.empty() ? "python" : language;
  const bool adjacent = written_ == written_at_block_end_;
  const bool same = !block_.streamed || (block_.language == lang && block_.code == code);
  if (adjacent && same) return;
  reset_terminal();
  end_line();
  write(colour_ ? std::string(kBoldYellow) + "The code to run:" + kDisplayReset + "\n" : "The code to run:\n");
  code_begin(lang);
  code_delta(code);
  code_end();
}

void TerminalDisplay::notice(NoticeLevel level, const std::string& text) {
  reset_terminal();  // a denial in the middle of a block's output is read in the terminal's normal state
  end_line();
  std::string safe = escape_for_terminal(text, /*keep_newlines=*/true);
  const char* colour = level == NoticeLevel::error ? kRed : level == NoticeLevel::warning ? kYellow : kDim;
  // Warnings and errors carry the agent's mark, so that a block's output cannot print one that looks the same.
  std::string marked = level == NoticeLevel::error     ? mark(kMarkError, "!")
                       : level == NoticeLevel::warning ? mark(kMarkWarning, "!")
                                                       : "";
  if (colour_) write(marked + colour + safe + kDisplayReset + "\n");
  else write(marked + safe + "\n");
}

void TerminalDisplay::host_changes(const std::vector<HostChange>& changes) {
  if (changes.empty()) return;
  reset_terminal();
  end_line();
  bool left_as_they_are = false;
  for (const HostChange& c : changes) {
    std::string line = "sandbox: " + describe_host_change(c);
    if (colour_) write(mark(kMarkWarning, "⚠") + kBoldYellow + line + kDisplayReset + "\n");
    else write(mark(kMarkWarning, "⚠") + "WARNING: " + line + "\n");
    left_as_they_are = left_as_they_are || c.kind == HostChange::Kind::protected_path;
  }
  if (left_as_they_are) {
    std::string advice = "  Protected paths are reported, not restored: check them before a program on this host "
                         "uses them (direnv, git hooks, CI, your editor).";
    write(colour_ ? std::string(kYellow) + advice + kDisplayReset + "\n" : advice + "\n");
  }
}

void TerminalDisplay::host_changes_summary(const std::vector<HostChange>& changes) {
  if (changes.empty()) return;
  notice(NoticeLevel::warning, "During this session the sandbox reported:");
  host_changes(changes);
}

void TerminalDisplay::before_question() {
  clear_spinner();
  reset_terminal();
  end_line();
  // The block above has been asked about: a later question (the next call's, after a block whose output was empty)
  // draws its own code again.
  written_at_block_end_ = SIZE_MAX;
  // The question follows on this line (UserInput::ask writes it), after the agent's mark. Written as it is: the
  // user's answer and its Enter end the line, so the line start stays as end_line() left it.
  std::string marked = mark(kMarkQuestion, "? oishell");
  std::fwrite(marked.data(), 1, marked.size(), out_);
  std::fflush(out_);
}

void TerminalDisplay::flush() {
  clear_spinner();
  std::fflush(out_);
}

}  // namespace oishell::agent
