#pragma once
// EventWriter: the protocol's output. Writes each event as one JSON line to an fd (the supervisor's stdout).
// Thread-safe (the relay thread and the session loop both emit); a line is written whole or not at all.
// Writes block when the client does not read: that is the back-pressure that slows a flooding executor down.
#include <mutex>

#include "runtime/outside/events.h"

namespace oishell::executors {

class EventWriter final : public EventSink {
 public:
  explicit EventWriter(int fd) : fd_(fd) {}
  void emit(const nlohmann::json& event) override;
  // False once a write failed (the client went away); later events are dropped.
  bool healthy() const;

 private:
  int fd_;
  mutable std::mutex mutex_;
  bool failed_ = false;
};

}  // namespace oishell::executors
