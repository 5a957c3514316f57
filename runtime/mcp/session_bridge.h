#pragma once
// SessionBridge: the executors' session (runtime/executors/session.h) in the MCP server's process. The session runs
// its poll loop on a thread of its own and reads supervisor-protocol requests (docs/protocol.md) from a pipe this
// object writes; its events, and the runtime's (denials, limits, the relay's), reach `handler` on the thread that
// emits them (the session's or the relay's), so the handler must be thread-safe and must never wait for a request
// to be written here (the session thread may be the one that would read it).
#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/unique_fd.h"
#include "runtime/executors/event_writer.h"
#include "runtime/executors/session.h"
#include "runtime/outside/sandbox.h"

namespace oishell::mcp {

class SessionBridge final : public executors::EventOutput {
 public:
  using Handler = std::function<void(const nlohmann::json& event)>;
  explicit SessionBridge(Handler handler) : handler_(std::move(handler)) {}
  ~SessionBridge() override { stop(); }
  SessionBridge(const SessionBridge&) = delete;
  SessionBridge& operator=(const SessionBridge&) = delete;

  // Starts the session's thread. Precondition (Sandbox::create's): the sandbox exists already.
  Status start(Sandbox& sandbox, std::vector<executors::AvailableLanguage> languages,
               executors::SessionOptions options, nlohmann::json ready_extra);
  // Sends one request (exec, run, interrupt, reset, answer). False once the session has ended.
  bool send(const nlohmann::json& request);
  // Ends the session: what runs is killed (`done` killed for each); returns when its thread has ended. Idempotent.
  void stop();
  // The client is gone: the session stops at its next turn.
  void client_gone() { healthy_ = false; }

  // EventOutput, for the session and the runtime.
  void emit(const nlohmann::json& event) override { handler_(event); }
  bool healthy() const override { return healthy_; }

 private:
  Handler handler_;
  UniqueFd requests_read_;
  UniqueFd requests_write_;
  std::mutex write_mutex_;
  std::thread thread_;
  std::atomic<bool> healthy_{true};
  std::atomic<bool> ended_{false};
};

}  // namespace oishell::mcp
