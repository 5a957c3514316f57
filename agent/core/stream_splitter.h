#pragma once
// Splits a streaming answer into prose and ``` code blocks as the deltas arrive, so that code can be shown (and
// emitted in --json) as code while the model is still writing it. A line that might be a fence is held back only
// until it is known not to be one.
#include <functional>
#include <string>
#include <string_view>

namespace oishell::agent {

class StreamSplitter {
 public:
  struct Handlers {
    std::function<void(std::string_view)> text;
    std::function<void(const std::string& language)> code_begin;
    std::function<void(std::string_view)> code;
    std::function<void()> code_end;
  };
  explicit StreamSplitter(Handlers h) : h_(std::move(h)) {}
  void feed(std::string_view delta);
  // End of the answer: releases what is held and closes an open block.
  void finish();
  bool in_code() const { return in_code_; }

 private:
  void take_line_start();
  void emit(std::string_view s);

  Handlers h_;
  bool in_code_ = false;
  bool at_line_start_ = true;
  bool code_has_text_ = false;  // the block's first line was emitted (newlines between lines are ours to add)
  std::string held_;            // the start of the current line while it could be a fence
  bool fence_line_ = false;     // held_ is a fence line being read to its end
};

}  // namespace oishell::agent
