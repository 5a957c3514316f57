#pragma once
// Server-sent events (the WHATWG event-stream format) parsed incrementally: bytes go in as they arrive, whole events
// come out. Lines end in \n, \r\n or \r (also split across feeds); `data:` lines join with \n; `:` lines are
// comments; an empty line dispatches the event.
#include <functional>
#include <string>
#include <string_view>

namespace oishell::agent {

struct SseEvent {
  std::string event;  // the `event:` field; empty means "message"
  std::string data;
  std::string id;
};

class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;
  explicit SseParser(Handler handler) : handler_(std::move(handler)) {}

  void feed(std::string_view bytes);
  // End of stream. The spec discards an event with no closing blank line; we dispatch it when it has data, since
  // a server that closes right after its last `data:` line meant it (what arrived is kept).
  void finish();
  // Bytes fed so far that formed no line yet (for diagnostics).
  size_t pending_bytes() const { return line_.size(); }

 private:
  void process_line(std::string_view line);
  void dispatch();

  Handler handler_;
  std::string line_;
  bool last_was_cr_ = false;
  bool has_data_ = false;
  SseEvent current_;
};

}  // namespace oishell::agent
