// Agent::run_block: one block in the sandbox, its output shown live and summarised for the model. Also what the
// sandbox reports outside a block (Agent::poll_sandbox) and when it shuts down (Agent::end_session).
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "agent/sandbox/computer_tool.h"
#include "agent/user/editor.h"
#include "agent/core/feedback.h"
#include "agent/llm/image.h"
#include "agent/core/loop.h"
#include "agent/sandbox/policy_keep.h"
#include "agent/host/subprocess.h"
#include "base/terminal_text.h"

namespace oishell::agent {
namespace {

// After an html block: the page's path (the html driver says "HTML saved to PATH; ..."), and how to open it when
// the host has a browser. Nothing is opened: the page is the model's, the user decides.
std::string html_open_hint(const std::string& output) {
  static constexpr std::string_view kSaved = "HTML saved to ";
  size_t at = output.rfind(kSaved);
  if (at == std::string::npos) return {};
  at += kSaved.size();
  size_t end = output.find("; ", at);
  if (end == std::string::npos) return {};
  const std::string path = output.substr(at, end - at);
  const char* browser = std::getenv("BROWSER");
  std::string opener = browser && *browser ? browser : program_on_path("xdg-open") ? "xdg-open" : "";
  if (opener.empty()) return {};
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  return "to see the page: " + opener + " " + quoted;
}

// What the sandbox reports besides a block's output: notices, network questions, host changes.
class SandboxObserver : public ExecObserver {
 public:
  // may_ask: a network question is put to the user (else it is denied: the session is ending). `explained`: the
  // paths whose fs.denied the user has seen this session (the model is told at every block; the user once).
  SandboxObserver(Display& display, UserInput& input, bool may_ask, std::set<std::string>& explained)
      : display_(display), input_(input), may_ask_(may_ask), explained_(explained) {}

  void on_output(std::string_view, std::string_view) override {}  // not a block's: no box to show it in
  void on_notice(const nlohmann::json& event) override {
    display_.sandbox_event(event);
    if (event.value("event", "") == "fs.denied" &&
        !explained_.insert(event.value("access", "") + " " + event.value("path", "")).second) {
      return;
    }
    display_.notice(NoticeLevel::warning, "sandbox: " + describe_event(event));
  }
  void on_host_change(const HostChange& change) override { host_changes_.push_back(change); }
  AskDecision on_ask(const nlohmann::json& ask) override {
    auto field = [&ask](const char* key) -> std::string {
      auto it = ask.find(key);
      if (it == ask.end() || it->is_null()) return {};
      return escape_for_terminal(it->is_string() ? it->get<std::string>() : it->dump());
    };
    std::string host = field("host").empty() ? "?" : field("host");
    std::string dest = host + (field("port").empty() ? "" : ":" + field("port"));
    if (!may_ask_) {
      display_.notice(NoticeLevel::warning, "code wants to reach " + dest + " — denied (the session is ending)");
      return AskDecision::deny;
    }
    if (!input_.can_ask()) {
      display_.notice(NoticeLevel::warning, "code wants to reach " + dest + " — denied (no terminal to ask)");
      return AskDecision::deny;
    }
    while (true) {
      bool interrupted = false;
      display_.before_question();
      auto answer = input_.ask_key("code wants to reach " + dest + " — allow (o)nce / (a)lways / (d)eny? ", "oadyn",
                                   &interrupted);
      AskDecision decision = AskDecision::deny;
      if (answer && !interrupted) {
        const std::string& a = *answer;
        if (a == "o" || a == "once" || a == "y" || a == "yes") {
          decision = AskDecision::allow_once;
        } else if (a == "a" || a == "always") {
          decision = AskDecision::allow_always;
        } else if (!(a == "d" || a == "deny" || a == "n" || a == "no" || a.empty())) {
          continue;
        }
      }
      answers_.push_back(describe_answer(dest, decision));
      if (decision == AskDecision::allow_always) {
        // The rule as a policy writes it; the host as the relay normalised it (no escape needed, but checked).
        std::string raw_host = ask.value("host", "");
        bool plain = !raw_host.empty() && raw_host.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-_:") ==
                                              std::string::npos;
        if (plain && ask.contains("port") && ask["port"].is_number_unsigned()) {
          std::string host = raw_host.find(':') != std::string::npos ? "[" + raw_host + "]" : raw_host;
          kept_.push_back(host + ":" + std::to_string(ask["port"].get<unsigned>()));
        }
      }
      return decision;
    }
  }

  // What the user answered to the network questions so far, in words, to be shown again where nothing from the
  // sandbox can follow them: a block's output around the question may have imitated or hidden it.
  std::vector<std::string> take_answers() { return std::exchange(answers_, {}); }

  // The destinations answered "always" so far, as rules ("HOST:PORT"), to offer keeping for later sessions.
  std::vector<std::string> take_kept() { return std::exchange(kept_, {}); }

  // The host changes reported so far, to be shown where nothing from the sandbox can follow them on the screen.
  std::vector<HostChange> take_host_changes() { return std::exchange(host_changes_, {}); }

 protected:
  Display& display_;

 private:
  static std::string describe_answer(const std::string& dest, AskDecision decision) {
    switch (decision) {
      case AskDecision::allow_once:
        return "network: you allowed " + dest + " once";
      case AskDecision::allow_always:
        return "network: you allowed " + dest + " for the rest of this session (and later ones, if you keep it)";
      case AskDecision::deny:
        break;
    }
    return "network: you denied " + dest;
  }

  UserInput& input_;
  bool may_ask_;
  std::set<std::string>& explained_;
  std::vector<HostChange> host_changes_;
  std::vector<std::string> answers_;
  std::vector<std::string> kept_;
};

class BlockObserver final : public SandboxObserver {
 public:
  BlockObserver(Display& display, UserInput& input, std::set<std::string>& explained, OutputTail& tail,
                std::vector<Message>& images)
      : SandboxObserver(display, input, /*may_ask=*/true, explained), tail_(tail), images_(images) {}

  void on_output(std::string_view stream, std::string_view data) override {
    display_.console_output(stream, data);
    tail_.add(data);
  }
  void on_active_line(int line) override { display_.active_line(line); }
  // An image the block displayed, as the executor protocol carried it (the supervisor checked the format and the
  // base64): shown, and kept for the model. Nothing is read from a path the sandbox named.
  void on_image(const std::string& format, const std::string& base64) override {
    display_.image(format, base64);
    Message image{"computer", "image", "base64." + format, base64, ""};
    if (is_image_data(image)) images_.push_back(std::move(image));
  }

 private:
  OutputTail& tail_;
  std::vector<Message>& images_;
};

}  // namespace

void Agent::show_host_changes(const std::vector<HostChange>& changes) {
  if (changes.empty()) return;
  parts_.display->host_changes(changes);
  host_changes_shown_.insert(host_changes_shown_.end(), changes.begin(), changes.end());
}

void Agent::show_answers(const std::vector<std::string>& answers) {
  for (const std::string& a : answers) {
    parts_.display->notice(a.starts_with("network: you denied") ? NoticeLevel::info : NoticeLevel::warning, a);
  }
}

void Agent::end_turn() {
  // The warnings shown before a later block ran may have scrolled away under its output: once more, below
  // everything the turn printed, and not again (at the next turn's end or the session's) unless a block runs after.
  if (!warnings_may_be_hidden_) return;
  parts_.display->host_changes_summary(host_changes_shown_);
  warnings_may_be_hidden_ = false;
}

std::string Agent::run_block(const std::string& language, const std::string& code, const std::string&,
                             bool* stop_turn) {
  *stop_turn = false;
  Display& d = *parts_.display;
  size_t max_output = static_cast<size_t>(parts_.config.max_output);
  OutputTail tail(max_output);
  block_images_.clear();
  BlockObserver observer(d, *parts_.input, paths_explained_, tail, block_images_);
  if (!host_changes_shown_.empty()) warnings_may_be_hidden_ = true;  // this block's output may scroll them away
  d.console_begin();
  std::string run_language = language, run_code = code;
  if (language == kComputerLanguage) {  // an action: carried out by the python executor's `computer`
    auto screen = computer_screen();
    auto action = nlohmann::json::parse(code, nullptr, /*allow_exceptions=*/false);
    std::string problem = !screen ? "the computer is not on in this session (--os)"
                                  : computer_action_problem(action, *screen);
    if (!problem.empty()) {
      d.console_end({{"status", "error"}, {"exit_code", -1}});
      d.notice(NoticeLevel::warning, escape_for_terminal(problem));
      return "The computer action was not carried out: " + problem + ".";
    }
    run_language = "python";
    run_code = computer_action_python(action, *screen);
  } else if (const HarnessTool* tool = harness() ? harness()->find(language) : nullptr) {
    auto arguments = nlohmann::json::parse(code, nullptr, /*allow_exceptions=*/false);
    std::string problem = harness_arguments_problem(*tool, arguments);
    if (!problem.empty()) {
      d.console_end({{"status", "error"}, {"exit_code", -1}});
      d.notice(NoticeLevel::warning, escape_for_terminal(problem));
      return "The call of tool `" + tool->name + "` was not carried out: " + problem + ".";
    }
    HarnessBlock block = harness_block(*harness(), *tool, arguments);
    run_language = block.language;
    run_code = block.code;
  }
  auto result = parts_.executor->exec(run_language, run_code, observer);
  if (!result) {
    d.console_end({{"status", "error"}, {"exit_code", -1}});
    show_answers(observer.take_answers());
    show_host_changes(observer.take_host_changes());
    d.notice(NoticeLevel::error, result.status().message());
    return tail.tail() + "\n[the code could not be run: " + result.status().message() + "]";
  }
  d.console_end({{"status", result->status}, {"exit_code", result->exit_code}, {"duration_ms", result->duration_ms}});
  session_denials_.insert(session_denials_.end(), result->denials.begin(), result->denials.end());
  if (language == "html" && result->status == "ok") {
    if (std::string hint = html_open_hint(tail.tail()); !hint.empty())
      d.notice(NoticeLevel::info, escape_for_terminal(hint));
  }
  // After the output and its box: nothing the block wrote can cover the answers and the warnings.
  show_answers(observer.take_answers());
  show_host_changes(observer.take_host_changes());
  for (const std::string& rule : observer.take_kept()) offer_to_keep(rule);
  if (result->user_interrupts >= 2) *stop_turn = true;
  return format_feedback(tail, *result, max_output);
}

void Agent::poll_sandbox() {
  SandboxObserver observer(*parts_.display, *parts_.input, /*may_ask=*/true, paths_explained_);
  parts_.executor->poll(observer);
  show_answers(observer.take_answers());
  show_host_changes(observer.take_host_changes());
  for (const std::string& rule : observer.take_kept()) offer_to_keep(rule);
}

bool Agent::change_policy(const nlohmann::json& request) {
  Display& d = *parts_.display;
  SandboxObserver observer(d, *parts_.input, /*may_ask=*/true, paths_explained_);
  auto answer = parts_.executor->change_policy(request, observer);
  show_answers(observer.take_answers());
  show_host_changes(observer.take_host_changes());
  if (!answer) {
    d.notice(NoticeLevel::error, "The policy was not changed: " + escape_for_terminal(answer.status().message()));
    return false;
  }
  auto lines = [&](const char* key) {
    std::string out;
    if (auto it = answer->find(key); it != answer->end() && it->is_array()) {
      for (const auto& l : *it) {
        if (l.is_string()) out += "\n  " + escape_for_terminal(l.get<std::string>());
      }
    }
    return out;
  };
  if (answer->value("event", "") != "policy.changed") {
    d.notice(NoticeLevel::error, "The policy was not changed (the one in force stays):" + lines("errors"));
    return false;
  }
  std::string text = "Applied to the running sandbox (no restart; the executors keep their state).";
  std::string widened = lines("widened"), narrowed = lines("narrowed");
  if (widened.empty() && narrowed.empty()) text += "\nNothing the network allows is different.";
  if (!widened.empty()) text += "\nNow allowed:" + widened;
  if (!narrowed.empty()) text += "\nNo longer allowed:" + narrowed;
  uint64_t closed = answer->value("closed_connections", uint64_t{0}) + answer->value("ended_associations", uint64_t{0});
  if (closed) text += "\n" + std::to_string(closed) + " open connection(s) to what is no longer allowed were closed.";
  text += "\nFor this session only; to keep a rule, add it to your policy file.";
  d.notice(NoticeLevel::info, text);
  return true;
}

void Agent::offer_to_keep(const std::string& rule) {
  Display& d = *parts_.display;
  const std::string shown = escape_for_terminal(rule);
  auto plan = plan_keep(parts_.config.keep, rule);
  if (!plan) {
    d.notice(NoticeLevel::info, "network: " + shown + " is allowed for this session only: " +
                                    escape_for_terminal(plan.status().message(), /*keep_newlines=*/true));
    return;
  }
  if (plan->unchanged()) {
    d.notice(NoticeLevel::info, "network: " + escape_for_terminal(plan->path) + " allows " + shown + " already.");
    return;
  }
  if (!parts_.input->can_ask()) {
    d.notice(NoticeLevel::info, "network: " + shown + " is allowed for this session only (no terminal to ask "
                                "whether to keep it).");
    return;
  }
  d.proposed_file(plan->path, plan->before, plan->after);
  d.notice(NoticeLevel::info, "To allow " + shown + " in later sessions too, interpreter would write:\n" +
                                  escape_for_terminal(describe_plan(*plan), /*keep_newlines=*/true));
  d.before_question();
  bool interrupted = false;
  auto answer = parts_.input->ask(std::string(kKeepQuestion), &interrupted);
  std::string a = answer && !interrupted ? *answer : "";
  while (!a.empty() && std::isspace(static_cast<unsigned char>(a.back()))) a.pop_back();
  if (a != "y" && a != "yes") {
    d.notice(NoticeLevel::info, "Not written: " + shown + " is allowed for this session only.");
    return;
  }
  if (Status s = carry_out(parts_.config.keep, *plan); !s.is_ok()) {
    d.notice(NoticeLevel::error, "Not written: " + escape_for_terminal(s.message()));
    return;
  }
  d.notice(NoticeLevel::info, "Written to " + escape_for_terminal(plan->path) + ": later sessions" +
                                  (plan->workspace_policy ? " in this workspace" : "") + " allow " + shown + ".");
}

void Agent::end_session() {
  Display& d = *parts_.display;
  // The warnings shown before a later block ran may have been scrolled or cleared away by its output: once more.
  if (warnings_may_be_hidden_) d.host_changes_summary(host_changes_shown_);
  SandboxObserver observer(d, *parts_.input, /*may_ask=*/false, paths_explained_);
  parts_.executor->finish(observer);
  show_host_changes(observer.take_host_changes());
  d.flush();
}

}  // namespace oishell::agent
