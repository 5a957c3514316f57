#include "runtime/executors/event_writer.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "runtime/executors/protocol.h"

namespace oishell::executors {

void EventWriter::emit(const nlohmann::json& event) {
  const std::string line = to_line(event);
  std::lock_guard lock(mutex_);
  if (failed_) return;
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::write(fd_, line.data() + off, line.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {  // a non-blocking stdout: wait until the client reads
      pollfd pfd{fd_, POLLOUT, 0};
      ::poll(&pfd, 1, -1);
    } else {
      failed_ = true;  // EPIPE: the client is gone; the session notices on its stdin
      return;
    }
  }
}

void RuntimeEventForwarder::emit(const nlohmann::json& event) {
  if (!event.is_object() || !event.contains("id")) return out_.emit(event);
  nlohmann::json copy = event;
  copy["process_id"] = copy["id"];
  copy.erase("id");
  out_.emit(copy);
}

bool EventWriter::healthy() const {
  std::lock_guard lock(mutex_);
  return !failed_;
}

}  // namespace oishell::executors
