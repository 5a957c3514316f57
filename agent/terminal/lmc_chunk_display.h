#pragma once
// The one Display that writes Open Interpreter's LMC chunks, to a sink (a callback): used by `--json` (JSON lines on
// stdout, agent/terminal/json_display.h) and by OI's server, `--server` and `--embed` (agent/server/lmc_display.h).
// Each message, code block and console run is framed by a {"role", "type", ["format",] "start": true} chunk and the
// same with "end": true, content in between:
//   {"role":"assistant","type":"message","content":"..."}
//   {"role":"assistant","type":"code","format":"python","content":"..."}
//   {"role":"computer","type":"console","format":"output","content":"..."}
//   {"role":"computer","type":"console","format":"active_line","content":3}
//   {"role":"computer","type":"confirmation","format":"execution","content":{"type":"code","format","content"}}
// The console's end adds status, exit_code and duration_ms. Notices are
// {"role":"system","type":"notice","format":"info|warning|error","content":...}; host changes are warning notices
// with a `host_change` object: {"kind":"protected_changed","path"} or {"kind":"repo_neutralised","path","found",
// "action"} (the supervisor's values as they came, for programs). Console output passes ConsoleFilter as on the
// terminal; notices are escaped (newlines kept). Where the two streams differ is an LmcDialect.
#include <functional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "agent/core/display.h"
#include "agent/terminal/sandbox_text.h"

namespace oishell::agent {

// Where `--json`'s stream and OI's server's differ (each field: what it does when true).
struct LmcDialect {
  // The user's message as chunks too, so that the stream is complete (--json).
  bool echo_user_message = false;
  // The model's prose and code, a code block's language, a confirmation's language and code and a host change's text
  // escaped (agent/terminal/sandbox_text.h), so that a consumer printing `content` shows what it holds (--json).
  // OI's server sends them as they are: its clients render them (as markdown, agent/server/lmc_display.h).
  bool escape_model_text = false;
  // A console run's start and end chunks carry "format":"output", and each output chunk its "stream" (--json).
  bool console_format_and_stream = false;
  // An image as start, content and end chunks (OI's server); otherwise one chunk with the content.
  bool image_framed = false;
  // An error notice as OI's server's {"role":"server","type":"error","content":...} (lmc_error).
  bool error_as_server_error = false;
  // An open assistant message is ended before a console run, a confirmation or a notice (OI's server).
  bool end_message_before_console_and_notices = false;

  static constexpr LmcDialect json_lines() { return {true, true, true, false, false, false}; }
  static constexpr LmcDialect oi_server() { return {false, false, false, true, true, true}; }
};

using LmcSink = std::function<void(const nlohmann::json& chunk)>;

class LmcChunkDisplay : public Display {
 public:
  // `on_tick`: called about every 100 ms while the model is awaited (OI's server looks at its client then).
  LmcChunkDisplay(LmcDialect dialect, LmcSink sink, std::function<void()> on_tick = nullptr)
      : dialect_(dialect), sink_(std::move(sink)), on_tick_(std::move(on_tick)) {}
  void user_message(const std::string& text) override;
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
  void output(const std::string& stream, const std::string& safe);
  // The model's text as the dialect sends it: escaped (a UTF-8 character cut between pieces held), or as it came.
  std::string model_text(std::string_view text);
  std::string model_text_rest();
  std::string terminal_safe(const std::string& text, bool keep_newlines) const;

  const LmcDialect dialect_;
  LmcSink sink_;
  std::function<void()> on_tick_;
  bool in_message_ = false;
  bool confirmation_pending_ = false;
  std::string code_format_;
  TextEscaper model_text_;  // the model's prose and code, with escape_model_text
  ConsoleFilter console_filter_;
};

// The chunk OI's server sends when a response is over: {"role":"server","type":"status","content":"complete"}.
nlohmann::json lmc_complete();
// OI's server's error: {"role":"server","type":"error","content":text}.
nlohmann::json lmc_error(const std::string& text);

}  // namespace oishell::agent
