#include "agent/terminal/json_display.h"

#include "agent/core/feedback.h"
#include "base/terminal_text.h"

namespace oishell::agent {

using nlohmann::json;

void JsonDisplay::emit(const json& chunk) {
  std::string line = chunk.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

void JsonDisplay::end_message() {
  if (!in_message_) return;
  in_message_ = false;
  std::string rest = model_text_.finish();
  if (!rest.empty()) emit({{"role", "assistant"}, {"type", "message"}, {"content", rest}});
  emit({{"role", "assistant"}, {"type", "message"}, {"end", true}});
}

void JsonDisplay::user_message(const std::string& text) {
  emit({{"role", "user"}, {"type", "message"}, {"start", true}});
  emit({{"role", "user"}, {"type", "message"}, {"content", text}});
  emit({{"role", "user"}, {"type", "message"}, {"end", true}});
}

void JsonDisplay::message_delta(std::string_view text) {
  if (!in_message_) {
    in_message_ = true;
    emit({{"role", "assistant"}, {"type", "message"}, {"start", true}});
  }
  std::string safe = model_text_.feed(text);
  if (!safe.empty()) emit({{"role", "assistant"}, {"type", "message"}, {"content", safe}});
}

void JsonDisplay::code_begin(const std::string& language) {
  end_message();
  code_format_ = escape_for_terminal(language.empty() ? "python" : language);
  emit({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"start", true}});
}

void JsonDisplay::code_delta(std::string_view code) {
  std::string safe = model_text_.feed(code);
  if (!safe.empty()) emit({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"content", safe}});
}

void JsonDisplay::code_end() {
  std::string rest = model_text_.finish();
  if (!rest.empty()) emit({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"content", rest}});
  emit({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"end", true}});
}

void JsonDisplay::answer_end() { end_message(); }

void JsonDisplay::console_begin() {
  (void)console_filter_.finish_stdout();
  (void)console_filter_.finish_stderr();
  emit({{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"start", true}});
}

void JsonDisplay::output(const std::string& stream, const std::string& safe) {
  if (safe.empty()) return;
  emit({{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"stream", stream}, {"content", safe}});
}

void JsonDisplay::console_output(std::string_view stream, std::string_view data) {
  std::string name = stream == "stderr" ? "stderr" : "stdout";
  output(name, console_filter_.feed(name, data));
}

void JsonDisplay::active_line(int line) {
  emit({{"role", "computer"}, {"type", "console"}, {"format", "active_line"}, {"content", line}});
}

void JsonDisplay::image(const std::string& format, const std::string& base64) {
  emit({{"role", "computer"}, {"type", "image"}, {"format", "base64." + format}, {"content", base64}});
}

void JsonDisplay::console_end(const json& result) {
  output("stdout", console_filter_.finish_stdout());
  output("stderr", console_filter_.finish_stderr());
  json chunk = {{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"end", true}};
  for (const char* key : {"status", "exit_code", "duration_ms"}) {
    if (result.contains(key)) chunk[key] = result[key];
  }
  emit(chunk);
}

void JsonDisplay::confirmation(const std::string& language, const std::string& code) {
  emit({{"role", "computer"}, {"type", "confirmation"}, {"format", "execution"},
        {"content",
         {{"type", "code"},
          {"format", escape_for_terminal(language)},
          {"content", escape_for_terminal(code, /*keep_newlines=*/true)}}}});
}

void JsonDisplay::notice(NoticeLevel level, const std::string& text) {
  const char* format = level == NoticeLevel::error ? "error" : level == NoticeLevel::warning ? "warning" : "info";
  emit({{"role", "system"}, {"type", "notice"}, {"format", format},
        {"content", escape_for_terminal(text, /*keep_newlines=*/true)}});
}

void JsonDisplay::host_changes(const std::vector<HostChange>& changes) {
  end_message();
  for (const HostChange& c : changes) {
    json detail = {{"kind", c.kind == HostChange::Kind::repository ? "repo_neutralised" : "protected_changed"},
                   {"path", c.path}};
    if (c.kind == HostChange::Kind::repository) {
      detail["found"] = c.found;
      detail["action"] = c.action;
    }
    emit({{"role", "system"}, {"type", "notice"}, {"format", "warning"},
          {"content", escape_for_terminal("sandbox: " + describe_host_change(c))}, {"host_change", detail}});
  }
}

}  // namespace oishell::agent
