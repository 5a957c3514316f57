#pragma once
// One direction of a relayed connection: bytes from a source socket to a destination socket through a bounded
// buffer (read(2) into it, send(2) out of it). Bytes queued with push() (protocol replies, a rewritten request
// head, a peeked ClientHello) go out before anything read later. The half-close is forwarded (shutdown(SHUT_WR)
// on the destination) only after everything read has been delivered.
//
// Why a buffer and not splice(2): measured on kernel 6.18 loopback (docs/network.md), moving the bytes through a
// 1 MiB buffer costs the whole transfer (server, relay, client) about a quarter less CPU per byte than splicing
// socket -> pipe -> socket, and is faster: the spliced segments reach the receiver as many small page fragments,
// the copied ones as full-size segments. The relay's own thread costs the same either way.
//
// Reads start in kFirstRead chunks and grow (x4 per full read) up to the capacity, so a short exchange never
// allocates more than that; the buffer is released whenever it runs empty (ByteQueue). Holding more than
// kFirstRead needs a lease from the relay's BufferBudget (buffer_budget.h); without one the direction stays at
// kFirstRead.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"
#include "runtime/relay/buffer_budget.h"
#include "runtime/relay/byte_queue.h"

namespace oishell::relay {

// A socket and what epoll last said about it (edge-triggered: a flag stays set until a call returns EAGAIN).
struct Endpoint {
  UniqueFd fd;
  bool readable = false;
  bool writable = false;
};

class Direction {
 public:
  // The most this direction holds before it stops reading its source (TCP backpressure then applies); past
  // kFirstRead only with a lease from `budget` (no budget: kFirstRead at most).
  void set_capacity(size_t bytes, BufferBudget* budget) {
    capacity_ = bytes;
    budget_ = budget;
  }

  // Queues bytes for the destination (may exceed the capacity: reads stop until it drains).
  void push(std::string_view bytes) { buf_.append(bytes); }
  // Queues what `produce(char* to, size_t max)` writes in place, at most `max` bytes, and returns how many it
  // wrote: bytes made elsewhere (a TLS record) land in the queue without an intermediate copy.
  template <typename Produce>
  size_t push_from(size_t max, Produce&& produce) {
    if (max == 0) return 0;
    size_t n = produce(buf_.write_space(max), max);
    buf_.commit(n);
    return n;
  }
  // While gated, reads go to the buffer (to be inspected through buffered()) and only released bytes are written.
  void set_gated(bool gated) {
    gated_ = gated;
    released_ = 0;
  }
  bool gated() const { return gated_; }
  // While gated: the next `n` buffered bytes not released yet may be written (an inspected request head).
  void release(size_t n) { released_ = std::min(released_ + n, buf_.size()); }
  // How many of the buffered bytes, from the front, are released and not written yet.
  size_t released() const { return released_; }
  std::string_view buffered() const { return buf_.view(); }
  // Drops buffered bytes (after a refusal, nothing of them may go out).
  void discard_buffered() {
    buf_.clear();
    released_ = 0;
  }

  // Reads what the source has, as far as there is room. Sets `progressed` when bytes moved.
  Status fill(Endpoint& src, bool& progressed);
  // Writes what is pending to the destination. Sets `progressed` when bytes moved.
  Status flush(Endpoint& dst, bool& progressed);
  // After fill() saw EOF and flush() delivered everything: shutdown(SHUT_WR) on the destination, once.
  Status forward_eof(Endpoint& dst);
  // Marks the source closed without reading (the connection ends this direction itself).
  void mark_eof() { eof_ = true; }

  bool eof() const { return eof_; }
  bool shut() const { return shut_; }
  size_t pending() const { return buf_.size(); }
  bool has_room() const { return buf_.size() < effective_capacity(); }
  uint64_t bytes_out() const { return bytes_out_; }

  static constexpr size_t kBufferCap = 256 * 1024;
  static constexpr size_t kFirstRead = 64 * 1024;

 private:
  size_t effective_capacity() const { return lease_.held() || !budget_ ? capacity_ : kFirstRead; }

  ByteQueue buf_;
  size_t capacity_ = kBufferCap;
  BufferBudget* budget_ = nullptr;  // null: the capacity needs no lease (protocol phases, forwarded requests)
  BudgetLease lease_;
  size_t read_chunk_ = kFirstRead;
  bool gated_ = false;
  size_t released_ = 0;  // while gated
  bool eof_ = false;
  bool shut_ = false;
  uint64_t bytes_out_ = 0;
};

}  // namespace oishell::relay
