#include "runtime/mcp/session_bridge.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "runtime/executors/protocol.h"

namespace oishell::mcp {

Status SessionBridge::start(Sandbox& sandbox, std::vector<executors::AvailableLanguage> languages,
                            executors::SessionOptions options, nlohmann::json ready_extra) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2(session requests)");
  requests_read_.reset(fds[0]);
  requests_write_.reset(fds[1]);
  thread_ = std::thread([this, &sandbox, languages = std::move(languages), options = std::move(options),
                         ready_extra = std::move(ready_extra)]() mutable {
    {
      executors::Session session(sandbox, *this, std::move(languages), std::move(options));
      (void)session.run(requests_read_.get(), ready_extra);
    }
    ended_ = true;
    handler_({{"event", "session_ended"}});
  });
  return Status::ok();
}

bool SessionBridge::send(const nlohmann::json& request) {
  const std::string line = executors::to_line(request);
  std::lock_guard lock(write_mutex_);
  if (ended_ || !requests_write_) return false;
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(requests_write_.get(), line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void SessionBridge::stop() {
  if (!thread_.joinable()) return;
  // `shutdown` ends it even while blocks run (end of input would wait for them); closing the pipe ends the input
  // of a session that is already past reading it.
  (void)send({{"op", "shutdown"}});
  {
    std::lock_guard lock(write_mutex_);
    requests_write_.reset();
  }
  thread_.join();
}

}  // namespace oishell::mcp
