#pragma once
// EventWriter: the protocol's output. Writes each event as one JSON line to an fd (the supervisor's stdout).
// Thread-safe (the relay thread and the session loop both emit); a line is written whole or not at all.
// Writes block when the client does not read: that is the back-pressure that slows a flooding executor down.
#include <mutex>

#include "runtime/outside/events.h"

namespace oishell::executors {

// Where a session's events go (Session): a sink that can tell when its reader is gone.
class EventOutput : public EventSink {
 public:
  // False once the reader is gone; the session then stops.
  virtual bool healthy() const = 0;
};

// The runtime's own events (denied, limit, net.*, start) forwarded to a session's client. Their "id" is the
// sandbox's process handle, not a block id, so it is renamed to "process_id" to keep `id` meaning a block.
class RuntimeEventForwarder final : public EventSink {
 public:
  explicit RuntimeEventForwarder(EventSink& out) : out_(out) {}
  void emit(const nlohmann::json& event) override;

 private:
  EventSink& out_;
};

class EventWriter final : public EventOutput {
 public:
  explicit EventWriter(int fd) : fd_(fd) {}
  void emit(const nlohmann::json& event) override;
  // False once a write failed (the client went away); later events are dropped.
  bool healthy() const override;

 private:
  int fd_;
  mutable std::mutex mutex_;
  bool failed_ = false;
};

}  // namespace oishell::executors
