#pragma once
// EventSink writing one JSON object per line to a file or an fd (docs/events.md). Thread-safe; each event is
// written with a single write(2) so that lines never interleave.
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"
#include "runtime/outside/events.h"

namespace oishell {

class JsonLinesEventSink final : public EventSink {
 public:
  // Opens (creates or truncates, 0600) `path`.
  static Result<std::unique_ptr<JsonLinesEventSink>> open_file(const std::string& path);
  // Writes to an fd the caller handed over (e.g. --events-fd 3); takes ownership.
  explicit JsonLinesEventSink(UniqueFd fd) : fd_(std::move(fd)) {}
  void emit(const nlohmann::json& event) override;

 private:
  std::mutex mutex_;
  UniqueFd fd_;
};

// Adds "time" (RFC 3339 UTC with milliseconds) to an event that has none.
void stamp_time(nlohmann::json* event);

}  // namespace oishell
