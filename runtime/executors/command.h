#pragma once
// Command: a one-shot process in the sandbox (the protocol's `run`: docs/protocol.md), started by sandbox init
// with argv as given (no executor, no shell). Streams its stdout and stderr as `output` events, feeds it the
// request's stdin, ends with `done` (ok: exit 0; error: another status; interrupted; timeout; killed), enforces
// the wall time (SIGKILL to its process group at the deadline) and interrupts (SIGINT, SIGKILL after the grace).
//
// Single-threaded: every method is called from the session's poll loop, as Executor's are.
#include <poll.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "runtime/executors/executor.h"
#include "runtime/executors/poll_client.h"
#include "runtime/executors/protocol.h"
#include "runtime/outside/events.h"
#include "runtime/outside/sandbox.h"

namespace oishell::executors {

class Command final : public PollClient {
 public:
  // Starts the process; on failure `done` (error, 127, the reason) has been emitted and finished() holds.
  Command(RunRequest request, Sandbox& sandbox, EventSink& events, const ExecutorOptions& options);
  ~Command() override;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  const std::string& id() const { return request_.id; }
  // `done` was emitted: the session drops it.
  bool finished() const { return finished_; }

  void interrupt();
  // The session ends: the process is killed and the command ends as `killed`.
  void shutdown();

  // PollClient.
  void add_pollfds(std::vector<pollfd>& fds) const override;
  bool owns_fd(int fd) const override;
  void on_fd(int fd, short revents) override;
  std::optional<Clock::time_point> next_deadline() const override;
  void on_time(Clock::time_point now) override;
  bool on_exit(const ExitInfo& exit) override;

 private:
  enum class Stop { none, interrupt, timeout, shutdown };
  void read_stream(UniqueFd& fd, const char* stream, Utf8Carry& carry, bool drain);
  void write_stdin();
  void finish(std::string status, int exit_code, std::string reason);

  RunRequest request_;
  Sandbox& sandbox_;
  EventSink& events_;
  ExecutorOptions options_;
  uint64_t process_id_ = 0;
  bool alive_ = false;
  bool finished_ = false;
  UniqueFd stdin_;
  UniqueFd stdout_;
  UniqueFd stderr_;
  size_t stdin_written_ = 0;
  Utf8Carry stdout_carry_;
  Utf8Carry stderr_carry_;
  Clock::time_point started_;
  std::optional<std::chrono::milliseconds> wall_time_;
  std::optional<Clock::time_point> deadline_;
  std::optional<Clock::time_point> kill_at_;  // after SIGINT: when to give up and SIGKILL
  Stop stop_ = Stop::none;
};

}  // namespace oishell::executors
