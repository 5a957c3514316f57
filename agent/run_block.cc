// Agent::run_block: one block in the sandbox, its output shown live and summarised for the model.
#include "agent/editor.h"
#include "agent/feedback.h"
#include "agent/loop.h"

namespace oishell::agent {
namespace {

class BlockObserver final : public ExecObserver {
 public:
  BlockObserver(Display& display, UserInput& input, OutputTail& tail) : display_(display), input_(input), tail_(tail) {}

  void on_output(std::string_view stream, std::string_view data) override {
    display_.console_output(stream, data);
    tail_.add(data);
  }
  void on_active_line(int line) override { display_.active_line(line); }
  void on_image(const std::string& format, const std::string& base64) override { display_.image(format, base64); }
  void on_notice(const nlohmann::json& event) override {
    display_.notice(NoticeLevel::warning, "sandbox: " + describe_event(event));
  }
  AskDecision on_ask(const nlohmann::json& ask) override {
    std::string host = ask.contains("host") && ask["host"].is_string() ? ask["host"].get<std::string>() : "?";
    std::string port = ask.contains("port") ? (ask["port"].is_string() ? ask["port"].get<std::string>()
                                                                       : ask["port"].dump())
                                            : "";
    std::string dest = host + (port.empty() ? "" : ":" + port);
    if (!input_.can_ask()) {
      display_.notice(NoticeLevel::warning, "code wants to reach " + dest + " — denied (no terminal to ask)");
      return AskDecision::deny;
    }
    while (true) {
      bool interrupted = false;
      auto answer = input_.ask("\ncode wants to reach " + dest + " — allow (o)nce / (a)lways / (d)eny? ", &interrupted);
      if (!answer || interrupted) return AskDecision::deny;
      std::string a = *answer;
      if (a == "o" || a == "once" || a == "y" || a == "yes") return AskDecision::allow_once;
      if (a == "a" || a == "always") return AskDecision::allow_always;
      if (a == "d" || a == "deny" || a == "n" || a == "no" || a.empty()) return AskDecision::deny;
    }
  }

 private:
  Display& display_;
  UserInput& input_;
  OutputTail& tail_;
};

}  // namespace

std::string Agent::run_block(const std::string& language, const std::string& code, const std::string&,
                             bool* stop_turn) {
  *stop_turn = false;
  Display& d = *parts_.display;
  size_t max_output = static_cast<size_t>(parts_.config.max_output);
  OutputTail tail(max_output);
  BlockObserver observer(d, *parts_.input, tail);
  d.console_begin();
  auto result = parts_.executor->exec(language, code, observer);
  if (!result) {
    d.console_end({{"status", "error"}, {"exit_code", -1}});
    d.notice(NoticeLevel::error, result.status().message());
    return tail.tail() + "\n[the code could not be run: " + result.status().message() + "]";
  }
  d.console_end({{"status", result->status}, {"exit_code", result->exit_code}, {"duration_ms", result->duration_ms}});
  if (result->user_interrupts >= 2) *stop_turn = true;
  return format_feedback(tail, *result, max_output);
}

}  // namespace oishell::agent
