#include "agent/terminal/json_display.h"

#include "agent/json_util.h"

namespace oishell::agent {

using nlohmann::json;

void JsonDisplay::emit(const json& chunk) {
  std::string line = dump_json(chunk);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

void JsonDisplay::end_message() {
  if (!in_message_) return;
  in_message_ = false;
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
  emit({{"role", "assistant"}, {"type", "message"}, {"content", std::string(text)}});
}

void JsonDisplay::code_begin(const std::string& language) {
  end_message();
  code_format_ = language.empty() ? "python" : language;
  emit({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"start", true}});
}

void JsonDisplay::code_delta(std::string_view code) {
  emit({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"content", std::string(code)}});
}

void JsonDisplay::code_end() {
  emit({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"end", true}});
}

void JsonDisplay::answer_end() { end_message(); }

void JsonDisplay::console_begin() {
  emit({{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"start", true}});
}

void JsonDisplay::console_output(std::string_view stream, std::string_view data) {
  emit({{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"stream", std::string(stream)},
        {"content", std::string(data)}});
}

void JsonDisplay::active_line(int line) {
  emit({{"role", "computer"}, {"type", "console"}, {"format", "active_line"}, {"content", line}});
}

void JsonDisplay::image(const std::string& format, const std::string& base64) {
  emit({{"role", "computer"}, {"type", "image"}, {"format", "base64." + format}, {"content", base64}});
}

void JsonDisplay::console_end(const json& result) {
  json chunk = {{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"end", true}};
  for (const char* key : {"status", "exit_code", "duration_ms"}) {
    if (result.contains(key)) chunk[key] = result[key];
  }
  emit(chunk);
}

void JsonDisplay::confirmation(const std::string& language, const std::string& code) {
  emit({{"role", "computer"}, {"type", "confirmation"}, {"format", "execution"},
        {"content", {{"type", "code"}, {"format", language}, {"content", code}}}});
}

void JsonDisplay::notice(NoticeLevel level, const std::string& text) {
  const char* format = level == NoticeLevel::error ? "error" : level == NoticeLevel::warning ? "warning" : "info";
  emit({{"role", "system"}, {"type", "notice"}, {"format", format}, {"content", text}});
}

}  // namespace oishell::agent
