#include "runtime/relay/pump.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace oishell::relay {
namespace {

bool transient(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

}  // namespace

bool Direction::enable_splice(size_t pipe_bytes) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  pipe_r_.reset(fds[0]);
  pipe_w_.reset(fds[1]);
  // Best effort: a larger pipe moves more per call; over the per-user pipe quota the default stays.
  fcntl(pipe_w_.get(), F_SETPIPE_SZ, static_cast<int>(pipe_bytes));
  int size = fcntl(pipe_w_.get(), F_GETPIPE_SZ);
  pipe_cap_ = size > 0 ? static_cast<size_t>(size) : 65536;
  return true;
}

void Direction::push(std::string_view bytes) {
  if (off_ > 0 && off_ == buf_.size()) {
    buf_.clear();
    off_ = 0;
  }
  buf_.append(bytes);
}

void Direction::discard_buffered() {
  buf_.clear();
  off_ = 0;
}

bool Direction::has_room() const {
  if (gated_ || !pipe_w_) return buf_.size() - off_ < kBufferCap;
  return in_pipe_ < pipe_cap_;
}

Status Direction::fill(Endpoint& src, bool& progressed) {
  while (src.readable && !eof_ && has_room()) {
    ssize_t n;
    if (gated_ || !pipe_w_) {
      if (off_ > 0 && off_ * 2 >= buf_.size()) {
        buf_.erase(0, off_);
        off_ = 0;
      }
      size_t old = buf_.size();
      size_t want = kBufferCap - (old - off_);
      buf_.resize(old + want);
      n = ::read(src.fd.get(), buf_.data() + old, want);
      buf_.resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
      if (n < 0 && transient(errno)) {
        if (errno != EINTR) src.readable = false;
        continue;
      }
      if (n < 0) return Status::from_errno(errno, "read");
    } else {
      n = splice(src.fd.get(), nullptr, pipe_w_.get(), nullptr, pipe_cap_ - in_pipe_,
                 SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n < 0 && transient(errno)) {
        // With bytes in the pipe, EAGAIN may mean the pipe's slots are full, not that the socket is empty:
        // keep the flag so the next round retries after the pipe drained.
        if (errno == EAGAIN && in_pipe_ > 0) return Status::ok();
        if (errno != EINTR) src.readable = false;
        continue;
      }
      if (n < 0) return Status::from_errno(errno, "splice(socket->pipe)");
      in_pipe_ += static_cast<size_t>(n);
    }
    if (n == 0) {
      eof_ = true;
      src.readable = false;
    } else {
      progressed = true;
    }
  }
  return Status::ok();
}

Status Direction::flush(Endpoint& dst, bool& progressed) {
  if (gated_) return Status::ok();
  while (dst.writable && pending() > 0) {
    ssize_t n;
    if (off_ < buf_.size()) {
      n = ::send(dst.fd.get(), buf_.data() + off_, buf_.size() - off_, MSG_NOSIGNAL);
      if (n > 0) {
        off_ += static_cast<size_t>(n);
        if (off_ == buf_.size()) {
          buf_.clear();
          off_ = 0;
        }
      }
    } else {
      n = splice(pipe_r_.get(), nullptr, dst.fd.get(), nullptr, in_pipe_, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) in_pipe_ -= static_cast<size_t>(n);
    }
    if (n < 0 && transient(errno)) {
      if (errno != EINTR) dst.writable = false;
      continue;
    }
    if (n < 0) return Status::from_errno(errno, off_ < buf_.size() ? "send" : "splice(pipe->socket)");
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
