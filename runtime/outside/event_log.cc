#include "runtime/outside/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <memory>

namespace oishell {

Result<std::unique_ptr<JsonLinesEventSink>> JsonLinesEventSink::open_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND, 0600));
  if (!fd) return Status::from_errno(errno, "open(\"" + path + "\")");
  return std::make_unique<JsonLinesEventSink>(std::move(fd));
}

void stamp_time(nlohmann::json* event) {
  if (event->contains("time")) return;
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  tm utc;
  ::gmtime_r(&ts.tv_sec, &utc);
  char buf[40];
  size_t n = ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof buf - n, ".%03ldZ", ts.tv_nsec / 1000000);
  (*event)["time"] = buf;
}

void JsonLinesEventSink::emit(const nlohmann::json& event) {
  nlohmann::json stamped = event;
  stamp_time(&stamped);
  std::string line = stamped.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);
  const char* data = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd_.get(), data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader went away; events are best effort past this point
    data += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace oishell
