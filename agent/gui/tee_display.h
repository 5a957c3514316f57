#pragma once
// Shows everything on two displays: the terminal (first: it decides interactive()) and the web page.
#include "agent/core/display.h"

namespace oishell::agent::gui {

class TeeDisplay final : public Display {
 public:
  TeeDisplay(Display& first, Display& second) : a_(first), b_(second) {}

  void user_message(const std::string& text) override { a_.user_message(text), b_.user_message(text); }
  void waiting(bool on) override { a_.waiting(on), b_.waiting(on); }
  void tick() override { a_.tick(), b_.tick(); }
  void message_delta(std::string_view text) override { a_.message_delta(text), b_.message_delta(text); }
  void code_begin(const std::string& language) override { a_.code_begin(language), b_.code_begin(language); }
  void code_delta(std::string_view code) override { a_.code_delta(code), b_.code_delta(code); }
  void code_end() override { a_.code_end(), b_.code_end(); }
  void answer_end() override { a_.answer_end(), b_.answer_end(); }
  void console_begin() override { a_.console_begin(), b_.console_begin(); }
  void console_output(std::string_view stream, std::string_view data) override {
    a_.console_output(stream, data), b_.console_output(stream, data);
  }
  void active_line(int line) override { a_.active_line(line), b_.active_line(line); }
  void image(const std::string& format, const std::string& base64) override {
    a_.image(format, base64), b_.image(format, base64);
  }
  void console_end(const nlohmann::json& result) override { a_.console_end(result), b_.console_end(result); }
  void confirmation(const std::string& language, const std::string& code) override {
    a_.confirmation(language, code), b_.confirmation(language, code);
  }
  void notice(NoticeLevel level, const std::string& text) override { a_.notice(level, text), b_.notice(level, text); }
  void host_changes(const std::vector<HostChange>& changes) override {
    a_.host_changes(changes), b_.host_changes(changes);
  }
  void host_changes_summary(const std::vector<HostChange>& changes) override {
    a_.host_changes_summary(changes), b_.host_changes_summary(changes);
  }
  void proposed_file(const std::string& path, const std::optional<std::string>& before,
                     const std::string& after) override {
    a_.proposed_file(path, before, after), b_.proposed_file(path, before, after);
  }
  void sandbox_event(const nlohmann::json& event) override { a_.sandbox_event(event), b_.sandbox_event(event); }
  void conversation_loaded(const std::vector<Message>& messages) override {
    a_.conversation_loaded(messages), b_.conversation_loaded(messages);
  }
  void before_question() override { a_.before_question(), b_.before_question(); }
  bool interactive() const override { return a_.interactive(); }
  void flush() override { a_.flush(), b_.flush(); }

 private:
  Display& a_;
  Display& b_;
};

}  // namespace oishell::agent::gui
