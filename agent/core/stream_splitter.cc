#include "agent/core/stream_splitter.h"

#include "agent/core/code_fence.h"

namespace oishell::agent {

void StreamSplitter::emit(std::string_view s) {
  if (s.empty()) return;
  if (in_code_) {
    if (h_.code) h_.code(s);
  } else if (h_.text) {
    h_.text(s);
  }
}

void StreamSplitter::feed(std::string_view delta) {
  for (size_t i = 0; i < delta.size(); ++i) {
    char c = delta[i];
    if (fence_line_) {
      if (c != '\n') {
        held_.push_back(c);
        continue;
      }
      // A whole fence line: open or close a block (agent/core/code_fence.h: the rule the runner reads fences by).
      std::string line = std::move(held_);
      held_.clear();
      fence_line_ = false;
      at_line_start_ = true;
      if (!in_code_) {
        in_code_ = true;
        code_has_text_ = false;
        if (h_.code_begin) h_.code_begin(opening_fence(line).value_or(""));
      } else if (closing_fence(line)) {
        in_code_ = false;
        if (h_.code_end) h_.code_end();
      } else {
        // "```python" inside a block is code text, as written.
        if (code_has_text_) emit("\n");
        emit(line);
        code_has_text_ = true;
      }
      continue;
    }
    if (at_line_start_) {
      held_.push_back(c);
      if (c == '\n') {
        // An empty (or spaces-only) line.
        std::string line = std::move(held_);
        held_.clear();
        if (in_code_) {
          if (code_has_text_) emit("\n");
          line.pop_back();
          emit(line);
          code_has_text_ = true;
        } else {
          emit(line);
        }
        continue;
      }
      if (opening_fence(held_)) {
        fence_line_ = true;
        at_line_start_ = false;
        continue;
      }
      if (could_be_fence(held_)) continue;
      // Not a fence: release the held start of the line.
      at_line_start_ = false;
      if (in_code_ && code_has_text_) emit("\n");
      if (in_code_) code_has_text_ = true;
      std::string line = std::move(held_);
      held_.clear();
      emit(line);
      continue;
    }
    if (c == '\n') {
      at_line_start_ = true;
      if (!in_code_) emit("\n");  // inside code the newline is emitted before the next line
      continue;
    }
    size_t end = delta.find('\n', i);
    if (end == std::string_view::npos) end = delta.size();
    emit(delta.substr(i, end - i));
    i = end - 1;
  }
}

void StreamSplitter::finish() {
  if (!held_.empty()) {
    if (fence_line_ && in_code_ && closing_fence(held_)) {
      held_.clear();
    } else if (fence_line_ && !in_code_) {
      // An opening fence at the very end: an empty block.
      std::string tag = opening_fence(held_).value_or("");
      held_.clear();
      if (h_.code_begin) h_.code_begin(tag);
      in_code_ = true;
    } else {
      if (in_code_ && code_has_text_) emit("\n");
      std::string rest = std::move(held_);
      held_.clear();
      emit(rest);
    }
  }
  fence_line_ = false;
  at_line_start_ = true;
  if (in_code_) {
    in_code_ = false;
    if (h_.code_end) h_.code_end();
  }
}

}  // namespace oishell::agent
