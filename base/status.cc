#include "base/status.h"

#include <cstring>

namespace oishell {

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  std::string text = name ? name : ("errno " + std::to_string(err));
  text += " (";
  text += strerror(err);
  text += ")";
  return text;
}

Status Status::from_errno(int err, std::string_view call) { return Status(err, std::string(call), true); }

Status Status::with_context(std::string_view context) const& {
  Status copy = *this;
  return std::move(copy).with_context(context);
}

Status Status::with_context(std::string_view context) && {
  if (!failed_) return std::move(*this);
  message_ = std::string(context) + ": " + message_;
  return std::move(*this);
}

Status Status::with_advice(std::string_view advice) && {
  if (!failed_ || advice.empty()) return std::move(*this);
  (void)message();  // the errno's text first
  // Given once, wherever it was added first (InitProcess::clone, then the supervisor's start).
  if (message_.find(advice) != std::string::npos) return std::move(*this);
  message_ += "; " + std::string(advice);
  return std::move(*this);
}

}  // namespace oishell
