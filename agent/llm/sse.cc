#include "agent/llm/sse.h"

namespace oishell::agent {

void SseParser::feed(std::string_view bytes) {
  for (char c : bytes) {
    if (c == '\n' && last_was_cr_) {  // the \n of a \r\n: the line was already processed at the \r
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = (c == '\r');
    if (c == '\r' || c == '\n') {
      process_line(line_);
      line_.clear();
    } else {
      line_.push_back(c);
    }
  }
}

void SseParser::finish() {
  if (!line_.empty()) {
    process_line(line_);
    line_.clear();
  }
  if (has_data_) dispatch();
  current_ = {};
  has_data_ = false;
}

void SseParser::process_line(std::string_view line) {
  if (line.empty()) {
    dispatch();
    return;
  }
  if (line.front() == ':') return;  // comment (keep-alive)
  std::string_view field = line, value;
  if (auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) current_.data.push_back('\n');
    current_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    current_.event.assign(value);
  } else if (field == "id") {
    current_.id.assign(value);
  }
  // `retry` and unknown fields are ignored, as the spec says.
}

void SseParser::dispatch() {
  if (has_data_) handler_(current_);
  std::string id = std::move(current_.id);
  current_ = {};
  current_.id = std::move(id);  // the last event id persists
  has_data_ = false;
}

}  // namespace oishell::agent
