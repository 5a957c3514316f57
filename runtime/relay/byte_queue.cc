#include "runtime/relay/byte_queue.h"

#include <cstring>

namespace oishell::relay {

char* ByteQueue::write_space(size_t want) {
  if (cap_ - end_ >= want) return data_.get() + end_;
  size_t used = size();
  if (cap_ - used >= want && begin_ > 0) {  // room enough once the consumed front is reclaimed
    std::memmove(data_.get(), data_.get() + begin_, used);
  } else {
    size_t cap = cap_ == 0 ? 4096 : cap_;
    while (cap - used < want) cap *= 2;
    std::unique_ptr<char[]> grown(new char[cap]);
    if (used > 0) std::memcpy(grown.get(), data_.get() + begin_, used);
    data_ = std::move(grown);
    cap_ = cap;
  }
  begin_ = 0;
  end_ = used;
  return data_.get() + end_;
}

void ByteQueue::append(std::string_view bytes) {
  if (bytes.empty()) return;
  std::memcpy(write_space(bytes.size()), bytes.data(), bytes.size());
  commit(bytes.size());
}

void ByteQueue::consume(size_t n) {
  begin_ += n;
  if (begin_ >= end_) clear();
}

void ByteQueue::clear() {
  begin_ = end_ = 0;
  if (cap_ > kKeepBytes) {
    data_.reset();
    cap_ = 0;
  }
}

}  // namespace oishell::relay
