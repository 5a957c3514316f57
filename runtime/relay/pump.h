#pragma once
// One direction of a relayed connection: bytes from a source socket to a destination socket, through a pipe pair
// with splice(2) when it can have one, else through a buffer. Bytes queued with push() (protocol replies, a
// rewritten request head, a peeked ClientHello) go out before anything read later. The half-close is forwarded
// (shutdown(SHUT_WR) on the destination) only after everything read has been delivered.
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::relay {

// A socket and what epoll last said about it (edge-triggered: a flag stays set until a call returns EAGAIN).
struct Endpoint {
  UniqueFd fd;
  bool readable = false;
  bool writable = false;
};

class Direction {
 public:
  // Creates the pipe pair (asking for `pipe_bytes` of capacity). Returns false when no pipe could be created
  // (e.g. EMFILE): the direction then stays in buffer mode, which is correct, only slower.
  bool enable_splice(size_t pipe_bytes);

  // Queues bytes for the destination.
  void push(std::string_view bytes);
  // While gated, reads go to the buffer (to be inspected through buffered()) and nothing is written.
  void set_gated(bool gated) { gated_ = gated; }
  bool gated() const { return gated_; }
  std::string_view buffered() const { return std::string_view(buf_).substr(off_); }
  // Drops buffered bytes (after a refusal, nothing of them may go out).
  void discard_buffered();

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
  size_t pending() const { return buf_.size() - off_ + in_pipe_; }
  bool has_room() const;
  uint64_t bytes_out() const { return bytes_out_; }

  static constexpr size_t kBufferCap = 256 * 1024;

 private:
  std::string buf_;
  size_t off_ = 0;
  UniqueFd pipe_r_, pipe_w_;
  size_t pipe_cap_ = 0;
  size_t in_pipe_ = 0;
  bool gated_ = false;
  bool eof_ = false;
  bool shut_ = false;
  uint64_t bytes_out_ = 0;
};

}  // namespace oishell::relay
