#pragma once
// PollClient: what the session's poll loop drives (runtime/executors/session.h): a persistent executor or a
// one-shot command. The loop asks each for the descriptors to watch and its next deadline, and hands it what
// happened: readiness of its descriptors, the time, the exit of a sandboxed process (which it claims when it is
// its own). Single-threaded: all of it runs on the session's loop.
#include <poll.h>

#include <chrono>
#include <optional>
#include <vector>

#include "runtime/outside/sandbox.h"

namespace oishell::executors {

using Clock = std::chrono::steady_clock;

class PollClient {
 public:
  virtual ~PollClient() = default;
  // Appends the descriptors to watch now.
  virtual void add_pollfds(std::vector<pollfd>& fds) const = 0;
  virtual bool owns_fd(int fd) const = 0;
  virtual void on_fd(int fd, short revents) = 0;
  // The next moment on_time() has something to do, if any.
  virtual std::optional<Clock::time_point> next_deadline() const = 0;
  virtual void on_time(Clock::time_point now) = 0;
  // The sandbox reported that process `exit.id` ended; false when it is not this client's.
  virtual bool on_exit(const ExitInfo& exit) = 0;
};

}  // namespace oishell::executors
