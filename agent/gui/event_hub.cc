#include "agent/gui/event_hub.h"

#include <chrono>

namespace oishell::agent::gui {

void EventHub::publish(nlohmann::json event) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  event["t"] = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  std::lock_guard lock(mutex_);
  if (closed_) return;
  event["seq"] = next_seq_;
  // Text from the sandbox or the model may be invalid UTF-8: replaced, never an exception.
  std::string text = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  bytes_ += text.size();
  events_.emplace_back(next_seq_++, std::move(text));
  while (bytes_ > max_bytes_ && events_.size() > 1) {
    bytes_ -= events_.front().second.size();
    events_.pop_front();
  }
  published_.notify_all();
}

EventHub::Batch EventHub::wait_after(uint64_t after, int timeout_ms) {
  std::unique_lock lock(mutex_);
  published_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return closed_ || next_seq_ - 1 > after; });
  Batch batch;
  batch.closed = closed_;
  if (events_.empty()) return batch;
  const uint64_t first = events_.front().first;  // the numbers kept are consecutive
  if (first > after + 1) batch.missed = first - after - 1;
  for (size_t i = first > after ? 0 : after + 1 - first; i < events_.size() && batch.events.size() < 4096; ++i) {
    batch.events.push_back(events_[i]);
  }
  return batch;
}

void EventHub::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  published_.notify_all();
}

uint64_t EventHub::last_seq() const {
  std::lock_guard lock(mutex_);
  return next_seq_ - 1;
}

}  // namespace oishell::agent::gui
