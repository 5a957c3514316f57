#pragma once
// --json: the message stream as JSON lines on stdout, in Open Interpreter's streaming format. Each chunk has
// `role` (user|assistant|computer), `type` (message|code|console|image|confirmation), `format` where it applies
// (the language of code; `output` or `active_line` for console; `base64.png` for images), and either `start: true`,
// `content`, or `end: true`. Notices are {"role":"system","type":"notice","format":"info|warning|error",...}.
#include <cstdio>

#include "agent/display.h"

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
  bool interactive() const override { return false; }
  void flush() override { std::fflush(out_); }

 private:
  void emit(const nlohmann::json& chunk);
  void end_message();

  FILE* out_;
  bool in_message_ = false;
  std::string code_format_;
};

}  // namespace oishell::agent
