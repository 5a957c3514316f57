#pragma once
// A Display that turns what the agent shows into Open Interpreter's LMC chunks, as its server streams them
// (interpreter/core/core.py `_respond_and_store`): each message, code block and console run is framed by a
// {"role", "type", ["format",] "start": true} chunk and the same with "end": true, content in between:
//   {"role":"assistant","type":"message","content":"..."}
//   {"role":"assistant","type":"code","format":"python","content":"..."}
//   {"role":"computer","type":"console","format":"output","content":"..."}
//   {"role":"computer","type":"console","format":"active_line","content":3}
//   {"role":"computer","type":"confirmation","format":"execution","content":{"type":"code","format","content"}}
// (console start/end carry no format, as OI's; the console end adds status, exit_code, duration_ms). Errors are OI's
// {"role":"server","type":"error","content":...}; other notices keep the --json shape
// {"role":"system","type":"notice","format":"info|warning","content":...}. The user's message is not echoed.
// Console output passes the same ConsoleFilter as the terminal's and --json's.
#include <functional>

#include <nlohmann/json.hpp>

#include "agent/core/display.h"
#include "base/markdown_fence.h"
#include "agent/terminal/sandbox_text.h"

namespace oishell::agent::server {

using LmcSink = std::function<void(const nlohmann::json& chunk)>;

class LmcDisplay final : public Display {
 public:
  // `on_tick`: called about every 100 ms while the model is awaited (the server looks at its client then).
  explicit LmcDisplay(LmcSink sink, std::function<void()> on_tick = nullptr)
      : sink_(std::move(sink)), on_tick_(std::move(on_tick)) {}
  void user_message(const std::string&) override {}
  void waiting(bool) override {}
  void tick() override {
    if (on_tick_) on_tick_();
  }
  void message_delta(std::string_view text) override;
  void code_begin(const std::string& language) override;
  void code_delta(std::string_view code) override;
  void code_end() override;
  void answer_end() override { end_message(); }
  void console_begin() override;
  void console_output(std::string_view stream, std::string_view data) override;
  void active_line(int line) override;
  void image(const std::string& format, const std::string& base64) override;
  void console_end(const nlohmann::json& result) override;
  void confirmation(const std::string& language, const std::string& code) override;
  void notice(NoticeLevel level, const std::string& text) override;
  void host_changes(const std::vector<HostChange>& changes) override;
  void host_changes_summary(const std::vector<HostChange>&) override {}
  void before_question() override {}
  bool interactive() const override { return false; }
  void flush() override {}

  // Whether confirmation() was the last thing shown (the question that follows is about code).
  bool take_confirmation_pending() { return std::exchange(confirmation_pending_, false); }

 private:
  void end_message();
  void output(const std::string& safe);

  LmcSink sink_;
  std::function<void()> on_tick_;
  bool in_message_ = false;
  bool confirmation_pending_ = false;
  std::string code_format_;
  ConsoleFilter console_filter_;
};

// The chunk OI's server sends when a response is over: {"role":"server","type":"status","content":"complete"}.
nlohmann::json lmc_complete();
nlohmann::json lmc_error(const std::string& text);

// Renders LMC chunks as the markdown text of a chat-completions answer, as OI's OpenAI-compatible endpoint does:
// messages as they are, code fenced with its language (```python ... ```), and here also the console output
// fenced (```output ... ```), errors and warnings as quoted lines. feed() returns the text to append ("" if none).
// Nothing a block prints or the model writes becomes markdown of its own: a line that could close a block's fence is
// indented so that it cannot (base/markdown_fence.h), images in the model's prose and in errors are drawn as text
// (a client would fetch them: a way out the sandbox's policy never sees), and every line of a quote is quoted.
class MarkdownRenderer {
 public:
  std::string feed(const nlohmann::json& chunk);

 private:
  std::string separate(std::string text);  // a new block starts on a line of its own
  static std::string info_string(const std::string& language);
  char last_ = '\n';
  bool any_ = false;
  FencedStream fenced_;   // the open code or output block's
  ImageBreaker prose_;    // the open assistant message's
};

}  // namespace oishell::agent::server
