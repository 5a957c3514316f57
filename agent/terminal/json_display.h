#pragma once
// --json: the message stream as JSON lines on stdout, in Open Interpreter's streaming format. Each chunk has
// `role` (user|assistant|computer), `type` (message|code|console|image|confirmation), `format` where it applies
// (the language of code; `output` or `active_line` for console; `base64.png` for images), and either `start: true`,
// `content`, or `end: true`. Notices are {"role":"system","type":"notice","format":"info|warning|error",...}.
// Host changes are warning notices with a `host_change` object: {"kind":"protected_changed","path":"PATH (what)"}
// or {"kind":"repo_neutralised","path","found","action"} (the supervisor's values as they came).
//
// Every line is ASCII (other characters as \uXXXX), so the stream itself is safe to watch on a terminal. Console
// output passes TerminalOutputFilter as on the terminal, and the model's prose and code, the code of a
// confirmation, notices and host changes' `content` are escaped (base/terminal_text.h: controls and hidden
// characters shown as \xNN and \u{...}), so a consumer that prints `content` gets text that stays on the screen and
// shows what it holds. (`host_change`'s fields are the supervisor's values as they came, for programs.)
#include <cstdio>

#include "agent/core/display.h"
#include "agent/terminal/sandbox_text.h"

namespace oishell::agent {

class JsonDisplay final : public Display {
 public:
  explicit JsonDisplay(FILE* out) : out_(out) {}
  void user_message(const std::string& text) override;
  void waiting(bool) override {}
  void message_delta(std::string_view text) override;
  void code_begin(const std::string& language) override;
  void code_delta(std::string_view code) override;
  void code_end() override;
  void answer_end() override;
  void console_begin() override;
  void console_output(std::string_view stream, std::string_view data) override;
  void active_line(int line) override;
  void image(const std::string& format, const std::string& base64) override;
  void console_end(const nlohmann::json& result) override;
  void confirmation(const std::string& language, const std::string& code) override;
  void notice(NoticeLevel level, const std::string& text) override;
  void host_changes(const std::vector<HostChange>& changes) override;
  void host_changes_summary(const std::vector<HostChange>&) override {}
  void before_question() override { flush(); }
  bool interactive() const override { return false; }
  void flush() override { std::fflush(out_); }

 private:
  void emit(const nlohmann::json& chunk);
  void end_message();
  void output(const std::string& stream, const std::string& safe);

  FILE* out_;
  bool in_message_ = false;
  std::string code_format_;
  TextEscaper model_text_;  // the model's prose and code
  ConsoleFilter console_filter_;
};

}  // namespace oishell::agent
