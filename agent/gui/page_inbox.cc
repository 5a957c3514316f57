#include "agent/gui/page_inbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace oishell::agent::gui {

namespace {

void set_readable(int fd, bool readable) {
  uint64_t count = 0;
  [[maybe_unused]] ssize_t n = ::read(fd, &count, sizeof count);  // now unreadable
  if (!readable) return;
  count = 1;
  n = ::write(fd, &count, sizeof count);
}

}  // namespace

Result<std::unique_ptr<PageInbox>> PageInbox::create() {
  UniqueFd messages(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!messages) return Status::from_errno(errno, "eventfd");
  UniqueFd ask(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!ask) return Status::from_errno(errno, "eventfd");
  return std::unique_ptr<PageInbox>(new PageInbox(std::move(messages), std::move(ask)));
}

void PageInbox::settle() {
  set_readable(messages_fd_.get(), !messages_.empty());
  set_readable(ask_fd_.get(), answer_.has_value() || stopped_);
}

bool PageInbox::push_message(std::string text) {
  std::lock_guard lock(mutex_);
  if (messages_.size() >= kMaxQueued) return false;
  messages_.push_back(std::move(text));
  settle();
  return true;
}

bool PageInbox::answer(uint64_t ask_id, std::string text) {
  std::lock_guard lock(mutex_);
  if (ask_id == 0 || ask_id != ask_id_ || answer_ || stopped_) return false;
  answer_ = std::move(text);
  settle();
  return true;
}

bool PageInbox::stop() {
  std::lock_guard lock(mutex_);
  if (at_prompt_) return false;
  if (ask_id_ != 0) {
    stopped_ = true;
    settle();
  }
  return true;
}

std::optional<std::string> PageInbox::take_message() {
  std::lock_guard lock(mutex_);
  if (messages_.empty()) return std::nullopt;
  std::string text = std::move(messages_.front());
  messages_.pop_front();
  settle();
  return text;
}

void PageInbox::set_at_prompt(bool at_prompt) {
  std::lock_guard lock(mutex_);
  at_prompt_ = at_prompt;
}

void PageInbox::open_ask(uint64_t ask_id) {
  std::lock_guard lock(mutex_);
  ask_id_ = ask_id;
  answer_.reset();
  stopped_ = false;
  settle();
}

std::optional<std::string> PageInbox::take_answer(bool* stopped) {
  std::lock_guard lock(mutex_);
  *stopped = std::exchange(stopped_, false);
  auto answer = std::exchange(answer_, std::nullopt);
  settle();
  return answer;
}

void PageInbox::close_ask() {
  std::lock_guard lock(mutex_);
  ask_id_ = 0;
  answer_.reset();
  stopped_ = false;
  settle();
}

}  // namespace oishell::agent::gui
