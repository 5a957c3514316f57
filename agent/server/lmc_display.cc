#include "agent/server/lmc_display.h"

#include <cctype>
#include <string_view>

namespace oishell::agent::server {

using nlohmann::json;

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
