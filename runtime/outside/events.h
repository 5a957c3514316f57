#pragma once
// EventSink: where the runtime reports what happened (start, denials, limit hits, exit). Events are JSON objects
// with an "event" key; the schema is in docs/events.md. Implementations must be thread-safe (the relay thread
// and the supervisor both emit).
#include <nlohmann/json.hpp>

namespace oishell {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(const nlohmann::json& event) = 0;
};

// Discards everything.
class NullEventSink final : public EventSink {
 public:
  void emit(const nlohmann::json&) override {}
};

}  // namespace oishell
