#include "agent/server/lmc_display.h"

#include <cctype>
#include <string_view>

#include "agent/core/feedback.h"
#include "base/terminal_text.h"

namespace oishell::agent::server {

using nlohmann::json;

json lmc_complete() { return {{"role", "server"}, {"type", "status"}, {"content", "complete"}}; }

json lmc_error(const std::string& text) { return {{"role", "server"}, {"type", "error"}, {"content", text}}; }

void LmcDisplay::end_message() {
  if (!in_message_) return;
  in_message_ = false;
  sink_({{"role", "assistant"}, {"type", "message"}, {"end", true}});
}

void LmcDisplay::message_delta(std::string_view text) {
  if (text.empty()) return;
  if (!in_message_) {
    in_message_ = true;
    sink_({{"role", "assistant"}, {"type", "message"}, {"start", true}});
  }
  sink_({{"role", "assistant"}, {"type", "message"}, {"content", std::string(text)}});
}

void LmcDisplay::code_begin(const std::string& language) {
  end_message();
  code_format_ = language.empty() ? "python" : language;
  sink_({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"start", true}});
}

void LmcDisplay::code_delta(std::string_view code) {
  if (code.empty()) return;
  sink_({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"content", std::string(code)}});
}

void LmcDisplay::code_end() {
  sink_({{"role", "assistant"}, {"type", "code"}, {"format", code_format_}, {"end", true}});
}

void LmcDisplay::console_begin() {
  end_message();
  (void)console_filter_.finish_stdout();
  (void)console_filter_.finish_stderr();
  sink_({{"role", "computer"}, {"type", "console"}, {"start", true}});
}

void LmcDisplay::output(const std::string& safe) {
  if (safe.empty()) return;
  sink_({{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"content", safe}});
}

void LmcDisplay::console_output(std::string_view stream, std::string_view data) {
  output(console_filter_.feed(stream == "stderr" ? "stderr" : "stdout", data));
}

void LmcDisplay::active_line(int line) {
  sink_({{"role", "computer"}, {"type", "console"}, {"format", "active_line"}, {"content", line}});
}

void LmcDisplay::image(const std::string& format, const std::string& base64) {
  json base = {{"role", "computer"}, {"type", "image"}, {"format", "base64." + format}};
  for (const char* part : {"start", "content", "end"}) {
    json chunk = base;
    if (part[0] == 'c') chunk["content"] = base64;
    else chunk[part] = true;
    sink_(chunk);
  }
}

void LmcDisplay::console_end(const json& result) {
  output(console_filter_.finish_stdout());
  output(console_filter_.finish_stderr());
  json chunk = {{"role", "computer"}, {"type", "console"}, {"end", true}};
  for (const char* key : {"status", "exit_code", "duration_ms"}) {
    if (result.contains(key)) chunk[key] = result[key];
  }
  sink_(chunk);
}

void LmcDisplay::confirmation(const std::string& language, const std::string& code) {
  end_message();
  confirmation_pending_ = true;
  sink_({{"role", "computer"}, {"type", "confirmation"}, {"format", "execution"},
         {"content", {{"type", "code"}, {"format", language}, {"content", code}}}});
}

void LmcDisplay::notice(NoticeLevel level, const std::string& text) {
  end_message();
  std::string safe = escape_for_terminal(text, /*keep_newlines=*/true);
  if (level == NoticeLevel::error) {
    sink_(lmc_error(safe));
    return;
  }
  sink_({{"role", "system"}, {"type", "notice"}, {"format", level == NoticeLevel::warning ? "warning" : "info"},
         {"content", safe}});
}

void LmcDisplay::host_changes(const std::vector<HostChange>& changes) {
  end_message();
  for (const HostChange& c : changes) {
    json detail = {{"kind", c.kind == HostChange::Kind::repository ? "repo_neutralised" : "protected_changed"},
                   {"path", c.path}};
    if (c.kind == HostChange::Kind::repository) {
      detail["found"] = c.found;
      detail["action"] = c.action;
    }
    sink_({{"role", "system"}, {"type", "notice"}, {"format", "warning"},
           {"content", "sandbox: " + describe_host_change(c)}, {"host_change", detail}});
  }
}

std::string MarkdownRenderer::separate(std::string text) {
  if (any_ && last_ != '\n') text.insert(0, "\n");
  if (any_) text.insert(0, "\n");
  return text;
}

// A language as a fence's info string: letters, digits and `+-_.#` only (the model names it: a newline in it
// would end the fence's line and start markdown of the model's own).
std::string MarkdownRenderer::info_string(const std::string& language) {
  std::string out;
  for (char c : language) {
    if (std::isalnum(static_cast<unsigned char>(c)) || std::string_view("+-_.#").find(c) != std::string_view::npos) {
      out += c;
    }
  }
  return out;
}

std::string MarkdownRenderer::feed(const json& chunk) {
  auto str = [&](const char* key) -> std::string {
    auto it = chunk.find(key);
    return it != chunk.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string role = str("role"), type = str("type"), format = str("format");
  bool start = chunk.value("start", false), end = chunk.value("end", false);
  std::string out;
  if (role == "assistant" && type == "message") {
    if (start) {
      prose_ = {};
      out = any_ ? separate("") : "";
    } else if (end) {
      out = prose_.finish();
    } else {
      out = prose_.feed(str("content"));
    }
  } else if ((role == "assistant" && type == "code") || (role == "computer" && type == "console")) {
    const bool code = role == "assistant";
    if (start) {
      fenced_ = {};
      out = separate("```" + (code ? info_string(format) : std::string("output")) + "\n");
    } else if (end) {
      out = std::string(last_ == '\n' ? "" : "\n") + "```\n";
    } else if (code || format == "output") {
      out = fenced_.feed(str("content"));
    }
  } else if (role == "computer" && type == "image") {
    if (start) out = separate("[an image was produced]\n");
  } else if (role == "server" && type == "error") {
    out = separate(quoted_markdown("Error: " + str("content")) + "\n");
  } else if (role == "system" && type == "notice" && format == "warning") {
    out = separate(quoted_markdown(str("content")) + "\n");
  }
  if (!out.empty()) {
    any_ = true;
    last_ = out.back();
  }
  return out;
}

}  // namespace oishell::agent::server
