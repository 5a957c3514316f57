#pragma once
// The human-facing renderer: streaming markdown, highlighted code blocks, a spinner while the model thinks, live
// output. With colour off (NO_COLOR, not a terminal, --plain) it prints plain text and ``` fences, for pipes.
// Output passes TerminalOutputFilter in either case (a program's colours stay), the model's text and everything
// else from inside the sandbox is escaped (agent/terminal/sandbox_text.h), and what output did to the terminal is
// undone at the end of the block and before a question. Questions, warnings and errors start with the agent's
// mark, a reverse-video label that neither output nor the model's text can draw.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>

#include "agent/core/display.h"
#include "agent/terminal/highlight.h"
#include "agent/terminal/markdown.h"
#include "agent/terminal/sandbox_text.h"

namespace oishell::agent {

class TerminalDisplay final : public Display {
 public:
  TerminalDisplay(FILE* out, bool colour, bool spinner, bool interactive, bool verbose);
  void user_message(const std::string& text) override;
  void waiting(bool on) override;
  void tick() override;
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
  void host_changes(const std::vector<HostChange>& changes) override;
  void host_changes_summary(const std::vector<HostChange>& changes) override;
  void before_question() override;
  bool interactive() const override { return interactive_; }
  void flush() override;

 private:
  void write(std::string_view s);
  void clear_spinner();
  void end_line();  // a newline unless the cursor is at a line start
  // The agent's mark for a question or a warning (`style`, reverse video, around " label "), or nothing without
  // marks.
  std::string mark(const char* style, std::string_view label) const;
  // Undoes what the output of a block did to the terminal (kResetColours or kResetTerminal), if anything.
  void reset_terminal();

  FILE* out_;
  bool colour_, spinner_enabled_, interactive_, verbose_;
  // Questions and warnings carry a mark: with colours, or at a terminal without them (reverse video is no colour).
  bool marks_;
  bool spinning_ = false;
  unsigned frame_ = 0;
  bool at_line_start_ = true;
  TerminalEffect output_effect_ = TerminalEffect::none;  // of the output since the last reset_terminal()
  ConsoleFilter console_filter_;
  TextEscaper model_text_;  // the model's prose and code
  MarkdownStyler markdown_;
  std::optional<Highlighter> highlighter_;
  std::string code_language_;
  // The last code block drawn, as given (not escaped): confirmation() compares the code it asks about with it.
  struct Block {
    std::string language, code;
    bool streamed = false;  // drawn while an answer streamed (not from the parsed call)
  } block_;
  bool answering_ = false;                     // between waiting(true) and answer_end()
  size_t written_ = 0;                         // bytes written so far
  size_t written_at_block_end_ = SIZE_MAX;     // written_ when the last code block was closed
};

}  // namespace oishell::agent
