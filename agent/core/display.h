#pragma once
// Everything the user (or an embedding program) sees goes through a Display: the terminal renderer
// (agent/terminal/terminal_display.h) or the JSON-lines machine mode (agent/terminal/json_display.h).
//
// Text from inside the sandbox (a block's output; paths, host names and messages in events) is chosen by sandboxed
// code, and the model's text may repeat it. The displays make it safe for the terminal themselves
// (agent/terminal/sandbox_text.h): callers pass it as it came.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/sandbox/executor.h"
#include "agent/core/message.h"

namespace oishell::agent {

enum class NoticeLevel { info, warning, error };

class Display {
 public:
  virtual ~Display() = default;
  // The user's message (echoed in --json so the stream is complete; the terminal already shows what was typed).
  virtual void user_message(const std::string& text) = 0;
  // Waiting for the model (a spinner on a terminal); tick() about every 100 ms; stopped by the first output.
  virtual void waiting(bool on) = 0;
  virtual void tick() {}
  // The assistant's answer as it streams: prose, and code blocks.
  virtual void message_delta(std::string_view text) = 0;
  virtual void code_begin(const std::string& language) = 0;
  virtual void code_delta(std::string_view code) = 0;
  virtual void code_end() = 0;
  virtual void answer_end() = 0;
  // A block running in the sandbox.
  virtual void console_begin() = 0;
  // Output as the block wrote it: filtered here, one TerminalOutputFilter per stream from console_begin() to
  // console_end().
  virtual void console_output(std::string_view stream, std::string_view data) = 0;
  virtual void active_line(int line) = 0;
  virtual void image(const std::string& format, const std::string& base64) = 0;
  virtual void console_end(const nlohmann::json& result) = 0;  // {status, exit_code, duration_ms}
  // The confirmation request for a block (before the y/n/e question).
  virtual void confirmation(const std::string& language, const std::string& code) = 0;
  // Shown escaped (newlines and tabs kept): a notice may quote what came from inside the sandbox.
  virtual void notice(NoticeLevel level, const std::string& text) = 0;
  // Files the host runs or obeys later that the run changed (protected paths) or that the supervisor neutralised
  // (git repositories): a warning that stands out, one line each.
  virtual void host_changes(const std::vector<HostChange>& changes) = 0;
  // At the end of a session, the session's host changes once more, where a later block's output may have scrolled
  // or cleared them away (the JSON stream, which nothing covers, already has each).
  virtual void host_changes_summary(const std::vector<HostChange>& changes) = 0;
  // The agent is about to ask the user something on the terminal (run this code? allow this connection?): the
  // line is ended, and whatever a block's output did to the terminal is undone, so the question is legible and the
  // last thing on the screen.
  virtual void before_question() = 0;
  // A file the agent offers to write, asked about next ("allow always" kept in a policy file): the displays that draw
  // diffs themselves (ACP) show it with the question; the others have the diff in a notice.
  virtual void proposed_file(const std::string& /*path*/, const std::optional<std::string>& /*before*/,
                             const std::string& /*after*/) {}
  // What the sandbox reported (a denial, a limit, an executor restart), as its event; notice() then shows it as text.
  virtual void sandbox_event(const nlohmann::json& /*event*/) {}
  // The conversation was replaced by a saved one (--conversations, %resume): the displays that show a whole
  // conversation (the web page) show it; the terminal has said so in a notice.
  virtual void conversation_loaded(const std::vector<Message>& /*messages*/) {}
  // Whether the user is a person at a terminal (prompts make sense).
  virtual bool interactive() const = 0;
  virtual void flush() = 0;
};

struct DisplayOptions {
  bool json = false;
  bool plain = false;    // no colours, no spinner, no markdown styling
  bool colour = true;    // decided from NO_COLOR and isatty unless plain
  bool verbose = false;
};

std::unique_ptr<Display> make_display(const DisplayOptions& options);

}  // namespace oishell::agent
