// Connection: a tunnel (CONNECT, SOCKS5, a brokered connect) whose host a `tls: terminate` rule decides. The
// terminator (https_terminator.h) holds both TLS ends in memory and decides each request; this moves bytes
// between it and the two sockets: each socket read as far as the terminator has room, its output queued in up_
// (to the upstream) and down_ (to the sandbox) and flushed.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string_view>

#include "runtime/relay/audit.h"
#include "runtime/relay/connection.h"

namespace oishell::relay {
namespace {

// What one read(2) takes at most: the bytes go from here straight into the terminator (no string between).
constexpr size_t kReadChunk = 64 * 1024;

char* read_scratch() {
  static thread_local std::unique_ptr<char[]> scratch(new char[kReadChunk]);  // the relay thread's
  return scratch.get();
}

// Reads what `src` has and hands each read to `feed`, each at most `room()` bytes (asked again before every read:
// feeding the terminator changes it). Sets `eof` at end of file; false on an error.
template <typename Room, typename Feed>
bool read_into(Endpoint& src, Room&& room, Feed&& feed, bool& eof, bool& progressed) {
  char* scratch = read_scratch();
  size_t want;
  while (src.readable && !eof && (want = std::min(room(), kReadChunk)) > 0) {
    ssize_t n = ::read(src.fd.get(), scratch, want);
    if (n > 0) {
      feed(std::string_view(scratch, static_cast<size_t>(n)));
      progressed = true;
    } else if (n == 0) {
      eof = true;
      src.readable = false;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      src.readable = false;
    } else if (errno != EINTR) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool Connection::start_terminator() {
  TerminatorConfig config;
  config.authority = ctx_.termination->authority.get();
  config.client_facing_ctx = ctx_.termination->client_facing.get();
  // The rules of one host share their trust: the first rule's upstream_ca (or the system store).
  auto upstream = ctx_.termination->upstream_context(terminating_.front().rule->upstream_ca);
  if (!upstream.is_ok()) {
    emit_error(*ctx_.events, host_, port_, "TLS to the upstream: " + upstream.status().message());
    phase_ = Phase::done;
    return false;
  }
  config.upstream_ctx = *upstream;
  config.host = host_;
  config.port = port_;
  config.rules = terminating_;
  config.all_placeholders = ctx_.termination->credentials.all_placeholders();
  auto made = HttpsTerminator::create(std::move(config));
  if (!made.is_ok()) {
    emit_error(*ctx_.events, host_, port_, "TLS termination: " + made.status().message());
    phase_ = Phase::done;
    return false;
  }
  terminator_ = std::move(made.value());
  if (!in_.empty()) {  // what the client sent behind its CONNECT (its ClientHello, at most a head's worth)
    terminator_->from_client(in_);
    in_.clear();
  }
  return true;
}

bool Connection::drive_terminated() {
  bool progressed;
  bool failed = false;
  HttpsTerminator& t = *terminator_;
  // The terminator's records go straight into each direction's queue, then out: after every read, so that a bulk
  // transfer streams in read-sized steps (the next hop works while this one reads on) and the terminator's output
  // is taken whole rather than left to be moved to the front of its buffer.
  auto move_out = [&] {
    if (up_.pending() < Direction::kBufferCap &&
        up_.push_from(Direction::kBufferCap - up_.pending(),
                      [&](char* to, size_t max) { return t.take_to_upstream(to, max); }) > 0) {
      progressed = true;
    }
    if (down_.pending() < Direction::kBufferCap &&
        down_.push_from(Direction::kBufferCap - down_.pending(),
                        [&](char* to, size_t max) { return t.take_to_client(to, max); }) > 0) {
      progressed = true;
    }
    failed = failed || !up_.flush(upstream_, progressed).is_ok() || !down_.flush(client_, progressed).is_ok();
  };
  do {
    progressed = false;
    if (!read_into(
            client_, [&] { return failed ? 0 : t.client_input_room(); },
            [&](std::string_view bytes) {
              t.from_client(bytes);
              move_out();
            },
            client_eof_, progressed)) {
      return true;
    }
    if (client_eof_ && !client_closed_told_) {
      client_closed_told_ = true;
      t.client_closed();
      progressed = true;
    }
    const bool was_eof = upstream_eof_;
    if (!read_into(
            upstream_, [&] { return failed ? 0 : t.upstream_input_room(); },
            [&](std::string_view bytes) {
              t.from_upstream(bytes);
              move_out();
            },
            upstream_eof_, progressed)) {
      upstream_eof_ = true;  // a failed socket ends the upstream as its end of file does
    }
    if (upstream_eof_ && !was_eof) t.upstream_closed();
    move_out();
    if (failed) return true;
    if (progressed) last_activity_ = Clock::now();
  } while (progressed);
  emit_terminator_events();
  return t.finished() && up_.pending() == 0 && down_.pending() == 0;
}

void Connection::emit_terminator_events() {
  for (const TerminatorEvent& e : terminator_->take_events()) {
    switch (e.kind) {
      case TerminatorEvent::Kind::allowed:
        break;  // the connection's net.allowed said the host; requests that pass are not each an event
      case TerminatorEvent::Kind::credential_used:
        emit_credential_used(*ctx_.events, host_, port_, e.method, e.path, e.credential);
        break;
      case TerminatorEvent::Kind::secret_withheld:
        emit_secret_withheld(*ctx_.events, host_, port_, e.credential);
        break;
      case TerminatorEvent::Kind::denied:
      case TerminatorEvent::Kind::credential_refused:
      case TerminatorEvent::Kind::refused:
        emit_request_denied(*ctx_.events, host_, port_, e.method, e.path,
                            e.reason.empty() ? std::string(event_kind_name(e.kind)) : e.reason, e.rule, e.credential);
        break;
      case TerminatorEvent::Kind::tls_error:
      case TerminatorEvent::Kind::upstream_certificate:
      case TerminatorEvent::Kind::upstream_error:
        emit_error(*ctx_.events, host_, port_, std::string(event_kind_name(e.kind)) + ": " + e.reason);
        break;
    }
  }
}

}  // namespace oishell::relay
