// An executor's control channel (runtime/executors/executor.h): what the driver sends, read within a budget per
// wake-up, split into lines of at most kMaxControlLine (a longer or malformed one dropped and reported once), and
// each line turned into what it says about the running block: ready, its active line, an image, its end.
#include "runtime/executors/executor.h"

#include <unistd.h>

#include <cerrno>

namespace oishell::executors {
namespace {

// A line that grows past this gets a buffer of kMaxControlLine at once: one allocation, which malloc maps on its
// own and unmaps when the line is done, instead of a doubling buffer whose steps and copies stay in the heap. Only
// the pages the line fills are resident. After the line the buffer is given back.
constexpr size_t kControlKeepCapacity = 1 << 20;

}  // namespace

// Reads at most `budget` bytes (and the rest of the read in progress) of what the driver sent.
void Executor::read_control(size_t budget) {
  char buffer[64 * 1024];
  size_t total = 0;
  while (control_ && total < budget) {
    ssize_t n = ::read(control_.get(), buffer, sizeof buffer);
    if (n > 0) {
      total += static_cast<size_t>(n);
      take_control_bytes(std::string_view(buffer, static_cast<size_t>(n)));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n == 0 || errno != EAGAIN) {
      control_.reset();  // the driver is gone; its exit report says why
    } else {
      return;
    }
  }
}

// Splits what arrived into lines. A line is handled straight from `bytes` when it arrived whole, else gathered in
// control_in_, which never holds more than kMaxControlLine: a longer line is dropped as it streams in.
void Executor::take_control_bytes(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view part = bytes.substr(0, nl);
    bytes.remove_prefix(nl == std::string_view::npos ? bytes.size() : nl + 1);
    if (control_skipping_) {
      control_skipping_ = nl == std::string_view::npos;  // the oversized line ends at this '\n'
    } else if (part.size() > kMaxControlLine - control_in_.size()) {
      std::string().swap(control_in_);
      control_skipping_ = nl == std::string_view::npos;
      report_dropped_line(/*oversized=*/true, "");
    } else if (nl == std::string_view::npos) {
      append_control(part);
    } else if (control_in_.empty()) {
      handle_control_line(part, nullptr);
    } else {
      append_control(part);
      handle_control_line(control_in_, &control_in_);
      control_in_.clear();
      if (control_in_.capacity() > kControlKeepCapacity) std::string().swap(control_in_);
    }
  }
}

void Executor::append_control(std::string_view part) {
  if (control_in_.size() + part.size() > kControlKeepCapacity) control_in_.reserve(kMaxControlLine);
  control_in_.append(part);
}

void Executor::report_dropped_line(bool oversized, std::string_view why) {
  // One report per kind and process: the block's code may be writing to the socket in a loop.
  if ((oversized ? control_oversized_++ : control_malformed_++) != 0) return;
  std::string message = "the " + language_.name + " executor sent ";
  message += oversized ? "a control line longer than 16 MiB" : "a malformed control line (" + std::string(why) + ")";
  message += "; it was dropped, as will be any other until the executor restarts (code in the sandbox may be "
             "writing to the executor's control socket)";
  events_.emit({{"event", "error"},
                {"message", std::move(message)},
                {"language", language_.name},
                {"kind", oversized ? "control_line_oversized" : "control_line_malformed"}});
}

void Executor::handle_control_line(std::string_view line, std::string* owner) {
  // Driver to supervisor: "R", "L <seq> <line>", "I <seq> <format> <base64>", "D <seq> <status> <code>", each
  // parsed strictly. A forged line that parses can only say something about the running block, as its output can.
  auto parsed = parse_control_line(line);
  if (!parsed) {
    report_dropped_line(/*oversized=*/false, parsed.status().message());
    return;
  }
  if (std::holds_alternative<ControlReady>(*parsed)) {
    if (!ready_) on_ready();
    return;
  }
  if (!block_ || control_seq(*parsed) != block_->seq) return;  // about an earlier block (stale) or none
  if (const auto* active = std::get_if<ControlActiveLine>(&*parsed)) {
    if (active->line > 0 && active->line != block_->last_line) {
      block_->last_line = active->line;
      events_.emit({{"event", "active_line"}, {"id", block_->request.id}, {"line", active->line}});
    }
  } else if (const auto* image = std::get_if<ControlImage>(&*parsed)) {
    nlohmann::json event = {{"event", "image"}, {"id", block_->request.id}, {"format", std::string(image->format)}};
    if (owner) {  // the line's buffer becomes the event's data: an image of megabytes is not copied
      owner->erase(0, static_cast<size_t>(image->base64.data() - owner->data()));
      event["data"] = std::move(*owner);
    } else {
      event["data"] = std::string(image->base64);
    }
    events_.emit(event);
  } else if (const auto* done = std::get_if<ControlDone>(&*parsed)) {
    std::string status(done->status);
    drain_streams();
    std::string reason;
    if (block_->stop == Stop::timeout) {
      status = "timeout";
      const auto wall = wall_time_of(block_->request);
      reason = "wall time limit " + std::to_string(wall ? wall->count() : 0) + " ms";
    } else if (block_->stop == Stop::interrupt && status != "ok") {
      status = "interrupted";
    }
    finish(status, done->code, reason);
  }
}

}  // namespace oishell::executors
