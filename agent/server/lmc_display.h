#pragma once
// The display of OI's server (`--server`, `--embed`): Open Interpreter's LMC chunks as its server streams them
// (interpreter/core/core.py `_respond_and_store`), written by the one LMC display (agent/terminal/lmc_chunk_display.h)
// in LmcDialect::oi_server(): content as it came (the clients render it), console start/end without a format (as
// OI's), images as start, content and end, errors as OI's {"role":"server","type":"error","content":...}, other notices
// in --json's shape {"role":"system","type":"notice","format":"info|warning","content":...}. The user's message is not
// echoed. Console output passes the same ConsoleFilter as the terminal's and --json's. Also here: the markdown an
// OpenAI-compatible answer is made of.
#include <functional>

#include <nlohmann/json.hpp>

#include "agent/terminal/lmc_chunk_display.h"
#include "base/markdown_fence.h"

namespace oishell::agent::server {

class LmcDisplay final : public LmcChunkDisplay {
 public:
  // `on_tick`: called about every 100 ms while the model is awaited (the server looks at its client then).
  explicit LmcDisplay(LmcSink sink, std::function<void()> on_tick = nullptr)
      : LmcChunkDisplay(LmcDialect::oi_server(), std::move(sink), std::move(on_tick)) {}
};

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
