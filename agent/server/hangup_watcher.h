#pragma once
// Notices, while the agent works, that the client has gone (closed or reset its connection) and stops the work, as
// Ctrl-C would. The agent's loop is single-threaded and does not read the client while a block runs silently, so
// the watching is done by a thread that only polls the socket for the hang-up (POLLRDHUP, POLLHUP, POLLERR: never
// for data, which stays for the session) and, once, calls `on_hangup` (which must be thread-safe). It neither
// allocates nor locks after it starts, so a fork in the agent's thread meanwhile is safe.
#include <atomic>
#include <functional>
#include <thread>

#include "base/unique_fd.h"

namespace oishell::agent::server {

class HangupWatcher {
 public:
  HangupWatcher(int fd, std::function<void()> on_hangup);
  ~HangupWatcher();  // stops the thread
  HangupWatcher(const HangupWatcher&) = delete;
  HangupWatcher& operator=(const HangupWatcher&) = delete;
  bool fired() const { return fired_.load(); }

 private:
  void run();

  int fd_;
  std::function<void()> on_hangup_;
  UniqueFd stop_read_, stop_write_;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace oishell::agent::server
