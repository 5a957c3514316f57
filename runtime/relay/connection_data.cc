// Connection: the data paths. Tunnels (CONNECT, SOCKS5) move bytes both ways after the SNI check; forwarding
// (absolute-form HTTP) follows the request stream, checks every request, and moves responses untouched.
#include <sys/socket.h>

#include "runtime/relay/audit.h"
#include "runtime/relay/connection.h"
#include "runtime/relay/tls_sni.h"

namespace oishell::relay {

bool Connection::check_sni() {
  SniResult sni = peek_client_hello_sni(up_.buffered());
  switch (sni.status) {
    case SniStatus::need_more:
      if (up_.eof()) up_.set_gated(false);  // the client ended before a whole record: nothing to check
      return true;
    case SniStatus::not_tls:
    case SniStatus::no_sni:
      up_.set_gated(false);
      return true;
    case SniStatus::found: {
      auto name = normalise_host(sni.name);
      if (name && *name == host_) {
        up_.set_gated(false);
        return true;
      }
      emit_denied(*ctx_.events, protocol_name(), host_, port_,
                  "TLS server name `" + sni.name.substr(0, 256) + "` does not match the requested host `" + host_ + "`",
                  "sni check");
      up_.discard_buffered();
      return false;
    }
    case SniStatus::malformed:
      emit_denied(*ctx_.events, protocol_name(), host_, port_, "malformed TLS ClientHello: " + sni.error,
                  "sni check");
      up_.discard_buffered();
      return false;
  }
  return false;
}

bool Connection::drive_tunnel() {
  bool progressed;
  do {
    progressed = false;
    if (!up_.fill(client_, progressed).is_ok()) return true;
    if (up_.gated() && (!up_.buffered().empty() || up_.eof()) && !check_sni()) return true;
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
