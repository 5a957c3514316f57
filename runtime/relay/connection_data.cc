// Connection: the data paths. Tunnels (CONNECT, SOCKS5) move bytes both ways, the client's held until the
// inspector (tunnel_inspect.h) passes them when the deciding rule inspects; forwarding
// (absolute-form HTTP) follows the request stream, checks every request, and moves responses untouched.
#include <sys/socket.h>

#include "runtime/relay/audit.h"
#include "runtime/relay/connection.h"

namespace oishell::relay {

// While the tunnel is gated: offers the client's unreleased bytes to the inspector and releases what it passed.
// False when the tunnel is refused (the event emitted, nothing of the held bytes forwarded).
bool Connection::inspect_tunnel() {
  if (!inspect_) {  // the rule says inspect: false: any protocol passes
    up_.set_gated(false);
    return true;
  }
  if (!inspector_) inspector_.emplace(host_, port_, ctx_.options.max_header_bytes);
  std::string_view fresh = up_.buffered().substr(up_.released());
  InspectStep step = inspector_->inspect(fresh, up_.eof());
  switch (step.state) {
    case InspectStep::State::opaque:
      up_.set_gated(false);
      return true;
    case InspectStep::State::need_more:
      up_.release(step.released);
      // Held bytes that fill the buffer and still show nothing: a head or ClientHello larger than any accepted.
      if (step.released < fresh.size() && up_.released() == 0 && !up_.has_room()) {
        step.rule = "inspection: too large";
        step.reason = "no complete request head or ClientHello in the first " + std::to_string(up_.pending()) +
                      " bytes";
        break;
      }
      return true;
    case InspectStep::State::refused:
      break;
  }
  emit_denied(*ctx_.events, protocol_name(), host_, port_, step.reason, step.rule);
  up_.discard_buffered();
  return false;
}

bool Connection::drive_tunnel() {
  bool progressed;
  do {
    progressed = false;
    if (!up_.fill(client_, progressed).is_ok()) return true;
    if (up_.gated() && (up_.buffered().size() > up_.released() || up_.eof()) && !inspect_tunnel()) return true;
    if (!up_.flush(upstream_, progressed).is_ok()) return true;
    if (!down_.fill(upstream_, progressed).is_ok()) return true;
    if (!down_.flush(client_, progressed).is_ok()) return true;
    if (progressed) last_activity_ = Clock::now();
  } while (progressed);
  if (!up_.forward_eof(upstream_).is_ok() || !down_.forward_eof(client_).is_ok()) return true;
  return up_.shut() && down_.shut();
}

Status Connection::advance_requests() {
  while (!switch_pending_ && phase_ == Phase::forwarding) {
    if (body_ == BodyState::length) {
      size_t take = static_cast<size_t>(std::min<uint64_t>(body_left_, in_.size()));
      up_.push(std::string_view(in_).substr(0, take));
      in_.erase(0, take);
      body_left_ -= take;
      if (body_left_ > 0) return Status::ok();
      body_ = BodyState::none;
      continue;
    }
    if (body_ == BodyState::chunked) {
      auto used = chunked_.feed(in_);
      if (!used) return used.status();
      up_.push(std::string_view(in_).substr(0, *used));
      in_.erase(0, *used);
      if (!chunked_.done()) return Status::ok();
      body_ = BodyState::none;
      continue;
    }
    if (in_.empty()) return Status::ok();
    HeadParse parsed = parse_request_head(in_, ctx_.options.max_header_bytes);
    switch (parsed.status) {
      case HeadStatus::incomplete:
        return Status::ok();
      case HeadStatus::too_large:
      case HeadStatus::malformed: {
        int code = parsed.status == HeadStatus::too_large ? 431 : 400;
        std::string reason = code == 431 ? "Request Header Fields Too Large" : "Bad Request";
        std::string error = parsed.error;
        in_.clear();
        after_current_upstream([this, code, reason, error] { refuse_http(code, reason, error); });
        return Status::ok();
      }
      case HeadStatus::complete:
        on_request_head(parsed.head, parsed.consumed);
        break;
    }
  }
  return Status::ok();
}

bool Connection::drive_forwarding() {
  bool progressed;
  do {
    progressed = false;
    bool room = in_.size() <= ctx_.options.max_header_bytes && up_.pending() < Direction::kBufferCap;
    if (!switch_pending_ && room && !read_client_into(in_, ctx_.options.max_header_bytes + 1, progressed)) {
      return true;
    }
    if (!advance_requests().is_ok()) return true;  // a broken chunked body: nothing sensible can follow
    if (phase_ != Phase::forwarding) return false;
    if (!up_.flush(upstream_, progressed).is_ok()) return true;
    if (!down_.fill(upstream_, progressed).is_ok()) return true;
    if (!down_.flush(client_, progressed).is_ok()) return true;
    if (progressed) last_activity_ = Clock::now();
  } while (progressed);

  // The request stream ended (client EOF) or the next request needs another upstream: end this exchange.
  if ((client_eof_ || switch_pending_) && !up_.eof()) up_.mark_eof();
  if (!up_.forward_eof(upstream_).is_ok()) return true;
  if (!down_.eof() || down_.pending() > 0) return false;
  if (switch_pending_) {
    close_upstream();
    up_ = Direction();
    down_ = Direction();
    reply_bytes_ = 0;
    switch_pending_ = false;
    auto action = std::move(pending_action_);
    pending_action_ = nullptr;
    action();
    return false;  // drive() continues in the new phase
  }
  // The server closed: deliver its end, then wait for the client to go.
  if (!down_.forward_eof(client_).is_ok()) return true;
  client_shut_ = true;
  if (client_eof_) return true;
  close_upstream();
  phase_ = Phase::draining;
  set_deadline(2'000);
  return false;
}

}  // namespace oishell::relay
