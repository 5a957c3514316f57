#pragma once
// ByteQueue: a FIFO of bytes in one contiguous, uninitialised allocation (no zero-filling before a read(2) into
// it, unlike std::string::resize). Bytes are appended at the back (append(), or write_space() + commit() for a
// read straight into it) and taken from the front (view() + consume()). The storage is given back when the queue
// runs empty with more than kKeepBytes allocated, so an idle connection holds no large buffer.
#include <cstddef>
#include <memory>
#include <string_view>

namespace oishell::relay {

class ByteQueue {
 public:
  static constexpr size_t kKeepBytes = 16 * 1024;

  size_t size() const { return end_ - begin_; }
  bool empty() const { return end_ == begin_; }
  std::string_view view() const { return {data_.get() + begin_, end_ - begin_}; }

  void append(std::string_view bytes);
  // Room for at least `want` more bytes at the back (moving or growing the storage as needed).
  char* write_space(size_t want);
  // After writing `n` bytes at write_space(): they join the queue.
  void commit(size_t n) { end_ += n; }
  void consume(size_t n);
  void clear();

 private:
  std::unique_ptr<char[]> data_;
  size_t cap_ = 0;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace oishell::relay
