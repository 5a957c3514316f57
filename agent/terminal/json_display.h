#pragma once
// --json: the message stream as JSON lines on stdout, in Open Interpreter's streaming format
// (agent/terminal/lmc_chunk_display.h, LmcDialect::json_lines()). Each chunk has `role` (user|assistant|computer),
// `type` (message|code|console|image|confirmation), `format` where it applies (the language of code; `output` or
// `active_line` for console; `base64.png` for images), and either `start: true`, `content`, or `end: true`. Notices
// are {"role":"system","type":"notice","format":"info|warning|error",...}. Host changes are warning notices with a
// `host_change` object: {"kind":"protected_changed","path":"PATH (what)"} or {"kind":"repo_neutralised","path",
// "found","action"} (the supervisor's values as they came).
//
// Every line is ASCII (other characters as \uXXXX), so the stream itself is safe to watch on a terminal. Console
// output passes TerminalOutputFilter as on the terminal, and the model's prose and code, the code of a
// confirmation, notices and host changes' `content` are escaped (base/terminal_text.h: controls and hidden
// characters shown as \xNN and \u{...}), so a consumer that prints `content` gets text that stays on the screen and
// shows what it holds. (`host_change`'s fields are the supervisor's values as they came, for programs.)
#include <cstdio>

#include "agent/terminal/lmc_chunk_display.h"

namespace oishell::agent {

class JsonDisplay final : public LmcChunkDisplay {
 public:
  // Each chunk a line on `out`, flushed.
  explicit JsonDisplay(FILE* out);
  void before_question() override { flush(); }
  void flush() override { std::fflush(out_); }

 private:
  FILE* out_;
};

}  // namespace oishell::agent
