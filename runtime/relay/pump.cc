#include "runtime/relay/pump.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace oishell::relay {
namespace {

bool transient(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

}  // namespace

Status Direction::fill(Endpoint& src, bool& progressed) {
  while (src.readable && !eof_ && has_room()) {
    size_t want = std::min(read_chunk_, effective_capacity() - buf_.size());
    ssize_t n = ::read(src.fd.get(), buf_.write_space(want), want);
    if (n < 0) {
      if (!transient(errno)) return Status::from_errno(errno, "read");
      if (errno != EINTR) src.readable = false;
      continue;
    }
    buf_.commit(static_cast<size_t>(n));
    if (n == 0) {
      eof_ = true;
      src.readable = false;
      continue;
    }
    progressed = true;
    if (static_cast<size_t>(n) < want) continue;
    // A full read: a bulk transfer. Larger reads and sends mean fewer calls and full-size segments.
    if (budget_ && !lease_.held() && capacity_ > kFirstRead) lease_.acquire(*budget_, capacity_ - kFirstRead);
    if (want == read_chunk_) read_chunk_ = std::min(read_chunk_ * 4, effective_capacity());
  }
  return Status::ok();
}

Status Direction::flush(Endpoint& dst, bool& progressed) {
  if (gated_ && released_ == 0) return Status::ok();
  while (dst.writable && !buf_.empty() && (!gated_ || released_ > 0)) {
    std::string_view bytes = buf_.view();
    if (gated_) bytes = bytes.substr(0, released_);
    ssize_t n = ::send(dst.fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (!transient(errno)) return Status::from_errno(errno, "send");
      if (errno != EINTR) dst.writable = false;
      continue;
    }
    if (n == 0) {  // not for a non-empty send on a stream socket; never spin on it
      dst.writable = false;
      continue;
    }
    buf_.consume(static_cast<size_t>(n));
    if (gated_) released_ -= static_cast<size_t>(n);
    if (buf_.empty()) lease_.release();  // the storage went back too (ByteQueue)
    bytes_out_ += static_cast<uint64_t>(n);
    progressed = true;
  }
  return Status::ok();
}

Status Direction::forward_eof(Endpoint& dst) {
  if (!eof_ || shut_ || pending() > 0) return Status::ok();
  shut_ = true;
  if (::shutdown(dst.fd.get(), SHUT_WR) != 0 && errno != ENOTCONN) return Status::from_errno(errno, "shutdown");
  return Status::ok();
}

}  // namespace oishell::relay
