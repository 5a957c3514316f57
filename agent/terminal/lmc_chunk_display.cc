#include "agent/terminal/lmc_chunk_display.h"

#include "agent/core/feedback.h"
#include "base/terminal_text.h"

namespace oishell::agent {

using nlohmann::json;

json lmc_complete() { return {{"role", "server"}, {"type", "status"}, {"content", "complete"}}; }

json lmc_error(const std::string& text) { return {{"role", "server"}, {"type", "error"}, {"content", text}}; }

std::string LmcChunkDisplay::model_text(std::string_view text) {
  return dialect_.escape_model_text ? model_text_.feed(text) : std::string(text);
}

std::string LmcChunkDisplay::model_text_rest() {
  return dialect_.escape_model_text ? model_text_.finish() : std::string();
}

std::string LmcChunkDisplay::terminal_safe(const std::string& text, bool keep_newlines) const {
  return dialect_.escape_model_text ? escape_for_terminal(text, keep_newlines) : text;
}

void LmcChunkDisplay::end_message() {
  if (!in_message_) return;
  in_message_ = false;
  std::string rest = model_text_rest();
  if (!rest.empty()) sink_({{"role", "assistant"}, {"type", "message"}, {"content", rest}});
  sink_({{"role", "assistant"}, {"type", "message"}, {"end", true}});
}

void LmcChunkDisplay::user_message(const std::string& text) {
  if (!dialect_.echo_user_message) return;
  sink_({{"role", "user"}, {"type", "message"}, {"start", true}});
  sink_({{"role", "user"}, {"type", "message"}, {"content", text}});
  sink_({{"role", "user"}, {"type", "message"}, {"end", true}});
}

void LmcChunkDisplay::message_delta(std::string_view text) {
  if (text.empty()) return;
  if (!in_message_) {
    in_message_ = true;
    sink_({{"role", "assistant"}, {"type", "message"}, {"start", true}});
  }
  std::string shown = model_text(text);
  if (!shown.empty()) sink_({{"role", "assistant"}, {"type", "message"}, {"content", shown}});
}

void LmcChunkDisplay::code_begin(const std::string& language) {
  end_message();
  code_format_ = terminal_safe(language.empty() ? "python" : language, /*keep_newlines=*/false);
  sink_({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"start", true}});
}

void LmcChunkDisplay::code_delta(std::string_view code) {
  std::string shown = model_text(code);
  if (!shown.empty()) sink_({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"content", shown}});
}

void LmcChunkDisplay::code_end() {
  std::string rest = model_text_rest();
  if (!rest.empty()) sink_({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"content", rest}});
  sink_({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"end", true}});
}

void LmcChunkDisplay::console_begin() {
  if (dialect_.end_message_before_console_and_notices) end_message();
  (void)console_filter_.finish_stdout();
  (void)console_filter_.finish_stderr();
  json chunk = {{"role", "computer"}, {"type", "console"}, {"start", true}};
  if (dialect_.console_format_and_stream) chunk["format"] = "output";
  sink_(chunk);
}

void LmcChunkDisplay::output(const std::string& stream, const std::string& safe) {
  if (safe.empty()) return;
  json chunk = {{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"content", safe}};
  if (dialect_.console_format_and_stream) chunk["stream"] = stream;
  sink_(chunk);
}

void LmcChunkDisplay::console_output(std::string_view stream, std::string_view data) {
  std::string name = stream == "stderr" ? "stderr" : "stdout";
  output(name, console_filter_.feed(name, data));
}

void LmcChunkDisplay::active_line(int line) {
  sink_({{"role", "computer"}, {"type", "console"}, {"format", "active_line"}, {"content", line}});
}

void LmcChunkDisplay::image(const std::string& format, const std::string& base64) {
  json base = {{"role", "computer"}, {"type", "image"}, {"format", "base64." + format}};
  if (!dialect_.image_framed) {
    base["content"] = base64;
    sink_(base);
    return;
  }
  for (const char* part : {"start", "content", "end"}) {
    json chunk = base;
    if (part[0] == 'c') chunk["content"] = base64;
    else chunk[part] = true;
    sink_(chunk);
  }
}

void LmcChunkDisplay::console_end(const json& result) {
  output("stdout", console_filter_.finish_stdout());
  output("stderr", console_filter_.finish_stderr());
  json chunk = {{"role", "computer"}, {"type", "console"}, {"end", true}};
  if (dialect_.console_format_and_stream) chunk["format"] = "output";
  for (const char* key : {"status", "exit_code", "duration_ms"}) {
    if (result.contains(key)) chunk[key] = result[key];
  }
  sink_(chunk);
}

void LmcChunkDisplay::confirmation(const std::string& language, const std::string& code) {
  if (dialect_.end_message_before_console_and_notices) end_message();
  confirmation_pending_ = true;
  sink_({{"role", "computer"}, {"type", "confirmation"}, {"format", "execution"},
         {"content",
          {{"type", "code"},
           {"format", terminal_safe(language, /*keep_newlines=*/false)},
           {"content", terminal_safe(code, /*keep_newlines=*/true)}}}});
}

void LmcChunkDisplay::notice(NoticeLevel level, const std::string& text) {
  if (dialect_.end_message_before_console_and_notices) end_message();
  std::string safe = escape_for_terminal(text, /*keep_newlines=*/true);
  if (level == NoticeLevel::error && dialect_.error_as_server_error) {
    sink_(lmc_error(safe));
    return;
  }
  const char* format = level == NoticeLevel::error ? "error" : level == NoticeLevel::warning ? "warning" : "info";
  sink_({{"role", "system"}, {"type", "notice"}, {"format", format}, {"content", safe}});
}

void LmcChunkDisplay::host_changes(const std::vector<HostChange>& changes) {
  end_message();
  for (const HostChange& c : changes) {
    json detail = {{"kind", c.kind == HostChange::Kind::repository ? "repo_neutralised" : "protected_changed"},
                   {"path", c.path}};
    if (c.kind == HostChange::Kind::repository) {
      detail["found"] = c.found;
      detail["action"] = c.action;
    }
    sink_({{"role", "system"}, {"type", "notice"}, {"format", "warning"},
           {"content", terminal_safe("sandbox: " + describe_host_change(c), /*keep_newlines=*/false)},
           {"host_change", detail}});
  }
}

}  // namespace oishell::agent
