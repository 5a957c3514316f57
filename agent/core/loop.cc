#include "agent/core/loop.h"

#include "agent/core/code_extract.h"
#include "agent/sandbox/computer_tool.h"
#include "agent/user/editor.h"
#include "agent/core/context.h"
#include "agent/host/interrupt.h"
#include "agent/llm/image.h"
#include "agent/llm/prompt_images.h"
#include "agent/llm/provider.h"
#include "agent/user/magic.h"
#include "agent/core/message_templates.h"
#include "agent/config/paths.h"
#include "agent/core/partial_json.h"
#include "agent/core/stream_splitter.h"
#include "agent/core/system_prompt.h"

namespace oishell::agent {
namespace {

// Shows the answer as it streams: prose and fenced code through the splitter, tool-call code as it is decoded.
class LoopSink final : public StreamSink {
 public:
  LoopSink(Display& display, unsigned interrupts_at_start, const Harness* harness)
      : display_(display),
        harness_(harness),
        start_(interrupts_at_start),
        splitter_({[this](std::string_view t) { display_.message_delta(t); },
                   [this](const std::string& lang) { display_.code_begin(canonical_language(lang)); },
                   [this](std::string_view c) { display_.code_delta(c); }, [this] { display_.code_end(); }}) {}

  void on_text(std::string_view delta) override {
    first_output();
    close_tool_code();
    splitter_.feed(delta);
  }
  void on_tool_call(size_t index, const ToolCall& call) override {
    first_output();
    if (!tool_open_ || index != tool_index_) {
      close_tool_code();
      splitter_.finish();
      tool_index_ = index;
      shown_ = 0;
    }
    // An action or a harness tool's call: shown in words once it is complete (one_model_turn).
    if (call.name == "computer" || (harness_ && harness_->find(call.name))) return;
    auto code = partial_json_string(call.arguments, "code");
    if (!code) {
      std::string args = call.arguments;
      size_t first = args.find_first_not_of(" \t\r\n");
      if (first == std::string::npos || args[first] == '{') return;  // JSON whose code has not started
      code = args;  // a tool whose arguments are the code itself
    }
    if (!tool_open_) {
      auto lang = partial_json_string(call.arguments, "language");
      display_.code_begin(canonical_language(lang ? *lang : call.name == "execute" ? "" : call.name));
      tool_open_ = true;
    }
    if (code->size() > shown_) {
      display_.code_delta(std::string_view(*code).substr(shown_));
      shown_ = code->size();
    }
  }
  void on_tick() override { display_.tick(); }
  void on_retry(const std::string& why, long delay_ms) override {
    display_.waiting(false);
    display_.notice(NoticeLevel::warning,
                    why + " — retrying in " + std::to_string((delay_ms + 500) / 1000) + " s");
    display_.waiting(true);
  }
  bool cancelled() override { return interrupt::count() != start_; }
  int cancel_fd() override { return interrupt::wake_fd(); }

  void finish() {
    first_output();
    close_tool_code();
    splitter_.finish();
    display_.answer_end();
  }

 private:
  void first_output() {
    if (started_) return;
    started_ = true;
    display_.waiting(false);
  }
  void close_tool_code() {
    if (!tool_open_) return;
    tool_open_ = false;
    display_.code_end();
  }

  Display& display_;
  const Harness* harness_;
  unsigned start_;
  StreamSplitter splitter_;
  bool started_ = false;
  bool tool_open_ = false;
  size_t tool_index_ = 0;
  size_t shown_ = 0;
};

}  // namespace

Agent::Agent(AgentParts parts)
    : parts_(std::move(parts)),
      messages_(std::move(parts_.history)),
      cost_(parts_.llm ? parts_.llm->settings().price : std::nullopt) {}

size_t Agent::context_window() {
  if (parts_.config.context_window) return static_cast<size_t>(*parts_.config.context_window);
  if (!parts_.llm) return 8000;
  const LlmSettings& s = parts_.llm->settings();
  return static_cast<size_t>(default_context_window(s.provider, s.model));
}

size_t Agent::answer_reserve() {
  return parts_.config.max_tokens ? static_cast<size_t>(*parts_.config.max_tokens)
                                  : std::min<size_t>(4096, context_window() / 4);
}

std::vector<std::string> Agent::languages() {
  std::vector<std::string> available = parts_.executor->languages();
  if (available.empty()) available = {"python", "shell"};
  if (parts_.config.languages.empty()) return available;
  std::vector<std::string> chosen;  // the profile's computer.languages, as far as the sandbox has them
  for (const auto& l : parts_.config.languages) {
    std::string c = canonical_language(l);
    for (const auto& a : available) {
      if (a == c) chosen.push_back(c);
    }
  }
  return chosen.empty() ? available : chosen;
}

std::string Agent::system_prompt() {
  PromptInputs in;
  in.facts = HostFacts::collect();
  in.languages = languages();
  in.tools = parts_.config.supports_functions;
  in.sandbox_description = parts_.executor->description();
  in.policy_summary = parts_.executor->policy_summary();
  in.system_message = parts_.config.system_message;
  in.custom_instructions = parts_.config.custom_instructions;
  if (const Harness* harness = this->harness()) {  // its prompt, unless the user wrote their own system message
    in.execute_tool = harness->execute_tool;
    if (in.system_message.empty() && !harness->prompt.empty()) in.system_message = harness->prompt;
  }
  std::string prompt = build_system_prompt(in);
  if (parts_.config.os) {
    auto screen = parse_screen_size(parts_.config.os_display).value_or(ComputerScreen{});
    prompt += "\n" + computer_prompt_section(computer_screen().value_or(screen), computer_screen().has_value());
  }
  return prompt;
}

const Harness* Agent::harness() const {
  if (!parts_.llm || !parts_.llm->settings().supports_functions) return nullptr;
  return parts_.llm->settings().harness.get();
}

std::optional<ComputerScreen> Agent::computer_screen() const {
  if (!parts_.llm || !parts_.llm->settings().supports_functions) return std::nullopt;
  return parts_.llm->settings().computer;
}

void Agent::save() {
  if (!parts_.store) return;
  Status s = parts_.store->save(messages_);
  if (!s.is_ok() && !save_warned_) {
    save_warned_ = true;
    parts_.display->notice(NoticeLevel::warning, "the conversation is not being saved: " + s.message());
  }
}

void Agent::append(Message m) {
  messages_.push_back(std::move(m));
  save();
}

void Agent::attach_prompt_images(const std::string& user_text) {
  Display& d = *parts_.display;
  const bool sees = parts_.llm && parts_.llm->settings().supports_vision;
  for (auto& image : load_prompt_images(user_text, home_dir(process_env()))) {
    if (!image.message) {
      d.notice(NoticeLevel::warning, "image not attached: " + image.problem);
      continue;
    }
    std::string what = describe_image(*image.message);
    d.notice(NoticeLevel::info,
             sees ? "attached " + image.path + " (" + what + ")"
                  : "attached " + image.path + " (" + what + ") as a description: " + parts_.llm->settings().model +
                        " is not known to see images (--llm_supports_vision sends it as an image)");
    append(std::move(*image.message));
  }
}

void Agent::show_no_model_help() {
  parts_.display->notice(
      NoticeLevel::info,
      "No language model is configured, so there is nobody to answer yet. The default, gpt-4o, needs\n"
      "OPENAI_API_KEY (at a terminal it is asked for). Configure a model with any of:\n"
      "  interpreter --model gpt-4o                      (and OPENAI_API_KEY in the environment)\n"
      "  interpreter --model claude-sonnet-4-5           (and ANTHROPIC_API_KEY)\n"
      "  interpreter --model groq/llama-3.3-70b-versatile  (and GROQ_API_KEY; docs/models.md lists the providers)\n"
      "  interpreter --model ollama/llama3.1             (a local Ollama on port 11434; no key)\n"
      "  interpreter --api_base http://localhost:8080/v1 --model local   (llama.cpp, LM Studio, vLLM...)\n"
      "  interpreter --local                             (find a local server)\n"
      "or put `llm: {model: ..., api_key: ..., api_base: ...}` in a profile (" +
          std::string("~/.config/open-interpreter/profiles/default.yaml") +
          ").\n"
          "Meanwhile `%% <command>` runs a shell command in the sandbox, and %help lists the other commands.");
}

Agent::Confirm Agent::confirm(Message* code) {
  if (parts_.config.auto_run) return Confirm::run;
  parts_.display->confirmation(code->format, code->content);
  while (true) {
    bool interrupted = false;
    parts_.display->before_question();
    auto answer = parts_.input->ask("  Would you like to run this code? (y/n/e) ", &interrupted);
    if (interrupted) return Confirm::stop;
    if (!answer) {
      parts_.display->notice(NoticeLevel::warning,
                             "Not run: nobody at a terminal to confirm it (run with -y to run code without asking).");
      return Confirm::skip;
    }
    std::string a = *answer;
    while (!a.empty() && std::isspace(static_cast<unsigned char>(a.back()))) a.pop_back();
    if (a == "y" || a == "Y" || a == "yes") return Confirm::run;
    if (a == "n" || a == "N" || a == "no") return Confirm::skip;
    if (a == "e" || a == "E") {
      if (auto edited = edit_in_editor(code->content, code->format, *parts_.display)) {
        code->content = *edited;
        parts_.display->code_begin(code->format);
        parts_.display->code_delta(code->content);
        parts_.display->code_end();
        return Confirm::run;
      }
      continue;
    }
  }
}

TurnEnd Agent::one_model_turn(bool* ran_code, unsigned interrupts_at_start) {
  *ran_code = false;
  Display& d = *parts_.display;
  if (Status s = parts_.executor->start(); !s.is_ok()) {
    d.notice(NoticeLevel::error, s.message());
    return TurnEnd::error;
  }
  poll_sandbox();
  parts_.llm->set_languages(languages());
  std::string system = system_prompt();
  size_t window = context_window();
  Trimmed trimmed = trim_to_window(system, messages_, window, answer_reserve());
  if ((trimmed.dropped > 0 || trimmed.cut_last) && parts_.config.verbose) {
    d.notice(NoticeLevel::info, "context: left out the " + std::to_string(trimmed.dropped) +
                                    " oldest messages to fit the context window of " + std::to_string(window) +
                                    " tokens");
  }
  if (parts_.config.max_budget) {
    if (auto refusal = budget_refusal(cost_, *parts_.config.max_budget, static_cast<long>(trimmed.tokens))) {
      d.notice(NoticeLevel::error, *refusal);
      return TurnEnd::budget;
    }
  }
  LoopSink sink(d, interrupts_at_start, harness());
  d.waiting(true);
  auto response = parts_.llm->complete(system, apply_message_templates(parts_.config, std::move(trimmed.messages)),
                                       sink);
  sink.finish();
  if (!response) {
    d.notice(NoticeLevel::error, response.status().message());
    return TurnEnd::error;
  }
  // Billed whether or not the answer was complete; the estimate stands in when the API reported no usage.
  size_t answer_bytes = response->text.size();
  for (const auto& call : response->tool_calls) answer_bytes += call.arguments.size() + call.name.size();
  cost_.add(response->usage,
            TokenUsage{static_cast<long>(trimmed.tokens), static_cast<long>((answer_bytes + 3) / 4)});
  Extraction ex = extract_answer(*response, languages(), computer_screen(), harness());
  if (parts_.config.verbose) {
    for (const auto& r : ex.repairs) d.notice(NoticeLevel::info, "repaired: " + r);
  }
  if (response->cancelled) {
    for (auto& part : ex.parts) {
      if (part.message.type == "message") append(part.message);
    }
    d.notice(NoticeLevel::warning, "Stopped (Ctrl-C).");
    return TurnEnd::interrupted;
  }
  if (!response->complete) {
    // What arrived is kept; incomplete code is not run.
    for (auto& part : ex.parts) append(part.message);
    d.notice(NoticeLevel::error, "The model's answer was cut off (" + response->cut_reason +
                                     "). What arrived is kept; its code was not run.");
    return TurnEnd::error;
  }
  bool stop = false;
  for (size_t i = 0; i < ex.parts.size(); ++i) {
    AnswerPart& part = ex.parts[i];
    if (part.message.type != "code") {
      append(part.message);
      continue;
    }
    *ran_code = true;
    std::string call_id = part.message.call_id;
    if (part.message.format == kComputerLanguage) {  // not shown while it streamed: shown now, in words
      d.code_begin(kComputerLanguage);
      auto action = nlohmann::json::parse(part.message.content, nullptr, /*allow_exceptions=*/false);
      d.code_delta(describe_computer_action(action));  // escaped by the display, as all model text
      d.code_end();
    } else if (const HarnessTool* tool = harness() ? harness()->find(part.message.format) : nullptr) {
      auto arguments = nlohmann::json::parse(part.message.content, nullptr, /*allow_exceptions=*/false);
      const bool shell = tool->run == HarnessTool::Run::shell || tool->run == HarnessTool::Run::argv;
      d.code_begin(shell ? "shell" : tool->name);
      d.code_delta(describe_harness_call(*tool, arguments));
      d.code_end();
    }
    if (stop) {
      append(part.message);
      append(Message::console("Not run: an earlier block in this answer was stopped.", call_id));
      continue;
    }
    if (!part.problem.empty()) {
      append(part.message);
      d.notice(NoticeLevel::warning, part.problem);
      append(Message::console(part.problem, call_id));
      continue;
    }
    Confirm c = confirm(&part.message);
    append(part.message);
    if (c == Confirm::stop) {
      append(Message::console("The user stopped before this code ran.", call_id));
      return TurnEnd::interrupted;
    }
    if (c == Confirm::skip) {
      append(Message::console("The user chose not to run this code.", call_id));
      return TurnEnd::declined;
    }
    bool stop_turn = false;
    std::string feedback = run_block(part.message.format, part.message.content, call_id, &stop_turn);
    append(Message::console(feedback, call_id));
    for (auto& image : take_block_images()) {
      // The computer's screenshot answers its call (the API wants it inside the tool's result).
      if (part.message.format == kComputerLanguage) image.call_id = call_id;
      append(std::move(image));
    }
    if (stop_turn) return TurnEnd::interrupted;
    if (interrupt::count() != interrupts_at_start) stop = true;  // interrupted: let the model react first
  }
  return TurnEnd::done;
}

namespace {

// Open Interpreter's --loop: the message that sends the model on, and the phrases that end the loop (the message
// asks the model to say one of them exactly).
const char kDefaultLoopMessage[] =
    "Proceed. You can run code on my machine. If the whole task I asked for is done, say exactly 'The task is "
    "done.' If you need specific information from me (a name, a password, a choice), say exactly 'Please provide "
    "more information.' If it cannot be done, say exactly 'The task is impossible.' If I have not given you a task, "
    "say exactly 'Let me know what you'd like to do next.' Otherwise keep going.";
const std::vector<std::string>& default_loop_breakers() {
  static const std::vector<std::string> kBreakers = {"The task is done.", "The task is impossible.",
                                                     "Let me know what you'd like to do next.",
                                                     "Please provide more information."};
  return kBreakers;
}

}  // namespace

std::optional<std::string> Agent::opens_multi_line(const std::string& line, bool fences) {
  if (line.starts_with("\"\"\"")) return "\"\"\"";
  if (fences && line.starts_with("```")) return "```";
  return std::nullopt;
}

bool Agent::read_multi_line(const std::string& delimiter, std::string* text) {
  std::string first = text->substr(delimiter.size());
  if (first.size() >= delimiter.size() && first.ends_with(delimiter)) {  // """all on one line"""
    *text = first.substr(0, first.size() - delimiter.size());
    return true;
  }
  std::string collected = first;
  bool have_line = !first.empty();
  while (true) {
    bool interrupted = false;
    auto more = parts_.input->read_message("... ", &interrupted);
    if (interrupted) {
      text->clear();  // Ctrl-C abandons what was typed, as at the prompt
      return true;
    }
    if (!more) {  // end of input: what was typed is still sent
      *text = collected;
      return !collected.empty();
    }
    bool closes = more->ends_with(delimiter);
    std::string part = closes ? more->substr(0, more->size() - delimiter.size()) : *more;
    if (!(closes && part.empty())) {
      collected += (have_line ? "\n" : "") + part;
      have_line = true;
    }
    if (closes) break;
  }
  *text = collected;
  return true;
}

bool Agent::loop_should_stop() const {
  const auto& breakers = parts_.config.loop_breakers.empty() ? default_loop_breakers() : parts_.config.loop_breakers;
  for (auto it = messages_.rbegin(); it != messages_.rend(); ++it) {
    if (it->role == "user") return false;  // the model said nothing since
    if (it->role != "assistant" || it->type != "message") continue;
    for (const auto& b : breakers) {
      if (!b.empty() && it->content.find(b) != std::string::npos) return true;
    }
    return false;  // only its last message counts
  }
  return false;
}

TurnEnd Agent::respond(const std::string& user_text) {
  Display& d = *parts_.display;
  d.user_message(user_text);
  if (!parts_.llm) {
    show_no_model_help();
    return TurnEnd::no_model;
  }
  append(Message::user(user_text));
  attach_prompt_images(user_text);
  int turns = 0;
  while (true) {
    TurnEnd end = run_turns(&turns);
    if (end != TurnEnd::done || !parts_.config.loop || loop_should_stop()) {
      end_turn();
      return end;
    }
    const std::string& next = parts_.config.loop_message.empty() ? std::string(kDefaultLoopMessage)
                                                                 : parts_.config.loop_message;
    d.notice(NoticeLevel::info, "--loop: the model has not said the task is over; sending it on.");
    append(Message::user(next));
  }
}

TurnEnd Agent::run_turns(int* turns) {
  Display& d = *parts_.display;
  unsigned interrupts_at_start = interrupt::count();
  for (; parts_.config.max_turns == 0 || *turns < parts_.config.max_turns; ++*turns) {
    bool ran_code = false;
    TurnEnd end = one_model_turn(&ran_code, interrupts_at_start);
    if (end != TurnEnd::done) return end;
    if (!ran_code) {
      ++*turns;
      return TurnEnd::done;
    }
    // A Ctrl-C stopped a block: the model hears about it once more, then the prompt returns.
    if (interrupt::count() != interrupts_at_start) {
      interrupts_at_start = interrupt::count();
    }
  }
  d.notice(NoticeLevel::warning,
           "Stopped after " + std::to_string(parts_.config.max_turns) + " turns (--max_turns).");
  return TurnEnd::max_turns;
}

int Agent::chat() {
  Display& d = *parts_.display;
  while (true) {
    bool interrupted = false;
    poll_sandbox();
    auto line = parts_.input->read_message("> ", &interrupted);
    if (interrupted) {
      d.notice(NoticeLevel::info, "");
      return 0;  // Ctrl-C at the prompt ends the session
    }
    if (!line) return 0;
    std::string text = *line;
    if (auto delimiter = opens_multi_line(text, parts_.config.multi_line)) {
      if (!read_multi_line(*delimiter, &text)) return 0;
      if (text.empty()) continue;
      respond(text);  // never a %command: it is text the user wrote out
      continue;
    }
    if (text.empty()) continue;
    if (text.front() == '%') {
      handle_magic(*this, text);
      continue;
    }
    respond(text);
  }
}

}  // namespace oishell::agent
