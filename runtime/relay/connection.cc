// Connection: lifecycle, handshakes (HTTP request head, SOCKS5 greeting/request), refusals and timers.
#include "runtime/relay/connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "runtime/relay/audit.h"

namespace oishell::relay {
namespace {

constexpr uint32_t kEdgeEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
constexpr uint32_t kDrainMs = 2'000;
constexpr size_t kSocksHandshakeMax = 2 + 255 + 4 + 1 + 255 + 2;

uint64_t ms_between(Clock::time_point a, Clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count());
}

}  // namespace

Connection::Connection(RelayContext& ctx, uint64_t id, Protocol protocol, UniqueFd client)
    : ctx_(ctx), id_(id) {
  client_.fd = std::move(client);
  phase_ = protocol == Protocol::socks5 ? Phase::socks_greeting : Phase::http_head;
  mode_ = protocol == Protocol::socks5 ? Mode::socks : Mode::connect;
  started_ = last_activity_ = Clock::now();
}

Connection::Connection(RelayContext& ctx, uint64_t id, std::string host, uint16_t port, UniqueFd client)
    : ctx_(ctx), id_(id) {
  client_.fd = std::move(client);
  phase_ = Phase::resolving;  // nothing to read from the client before the decision
  mode_ = Mode::transparent;
  host_ = std::move(host);
  port_ = port;
  started_ = last_activity_ = Clock::now();
}

bool Connection::begin_transparent() {
  begin_decision();
  return drive();
}

Connection::~Connection() {
  close_upstream();
  if (client_.fd) ctx_.loop->remove(client_.fd.get());
}

Status Connection::start() {
  OI_TRY(ctx_.loop->add(client_.fd.get(), kEdgeEvents, conn_tag(id_, Role::client)));
  set_deadline(ctx_.options.header_timeout_ms);
  idle_check_ = last_activity_ + std::chrono::milliseconds(ctx_.options.idle_timeout_ms);
  ctx_.timers.push(idle_check_, id_);
  return Status::ok();
}

std::string_view Connection::protocol_name() const {
  switch (mode_) {
    case Mode::connect:
      return "http-connect";
    case Mode::forward:
      return "http";
    case Mode::socks:
      return "socks5";
    case Mode::transparent:
      return "transparent";
  }
  return "http";
}

void Connection::set_deadline(uint32_t ms) {
  deadline_ = Clock::now() + std::chrono::milliseconds(ms);
  has_deadline_ = true;
  ctx_.timers.push(deadline_, id_);
}

void Connection::close_upstream() {
  if (upstream_.fd) {
    ctx_.loop->remove(upstream_.fd.get());
    upstream_.fd.reset();
  }
  upstream_.readable = upstream_.writable = false;
  if (upstream_open_) {
    upstream_open_ = false;
    uint64_t down = down_.bytes_out() > reply_bytes_ ? down_.bytes_out() - reply_bytes_ : 0;
    emit_closed(*ctx_.events, host_, port_, up_.bytes_out(), down, ms_between(upstream_started_, Clock::now()),
                closed_reason_);
  }
}

bool Connection::on_event(Role role, uint32_t events) {
  Endpoint& ep = role == Role::client ? client_ : upstream_;
  if (!ep.fd) return phase_ == Phase::done;
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ep.readable = true;
  if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) ep.writable = true;
  if (role == Role::upstream && phase_ == Phase::connecting) {
    if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return false;
    return on_upstream_writable_while_connecting();
  }
  bool waiting = phase_ == Phase::asking || phase_ == Phase::resolving || phase_ == Phase::connecting;
  if (role == Role::client && waiting && (events & (EPOLLHUP | EPOLLERR))) return true;  // the client left
  return drive();
}

bool Connection::drive() {
  for (int round = 0; round < 8; ++round) {
    Phase before = phase_;
    bool progressed = false;
    switch (phase_) {
      case Phase::socks_greeting:
      case Phase::socks_request:
      case Phase::http_head: {
        size_t limit = phase_ == Phase::http_head ? ctx_.options.max_header_bytes + 1 : kSocksHandshakeMax;
        if (!read_client_into(in_, limit, progressed)) return true;
        if (phase_ == Phase::http_head) {
          on_http_head();
        } else {
          on_socks_bytes();
        }
        if (phase_ == before && client_eof_) return true;  // closed before completing its request
        if (phase_ != Phase::done && phase_ != Phase::draining) {
          if (!down_.flush(client_, progressed).is_ok()) return true;
        }
        break;
      }
      case Phase::asking:
      case Phase::resolving:
      case Phase::connecting:
        return false;
      case Phase::tunnel:
        if (terminator_ ? drive_terminated() : drive_tunnel()) return true;
        break;
      case Phase::forwarding:
        if (drive_forwarding()) return true;
        break;
      case Phase::draining:
        return drive_draining();
      case Phase::done:
        return true;
    }
    if (phase_ == before) break;
  }
  return phase_ == Phase::done;
}

bool Connection::read_client_into(std::string& into, size_t limit, bool& progressed) {
  char buf[16 * 1024];
  while (client_.readable && !client_eof_ && into.size() < limit) {
    ssize_t n = ::read(client_.fd.get(), buf, std::min(sizeof buf, limit - into.size()));
    if (n > 0) {
      into.append(buf, static_cast<size_t>(n));
      progressed = true;
      last_activity_ = Clock::now();
    } else if (n == 0) {
      client_eof_ = true;
      client_.readable = false;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      client_.readable = false;
    } else if (errno != EINTR) {
      return false;
    }
  }
  return true;
}

void Connection::on_socks_bytes() {
  std::string error;
  if (phase_ == Phase::socks_greeting) {
    Socks5Greeting greeting;
    switch (parse_socks5_greeting(in_, greeting, error)) {
      case Socks5Parse::incomplete:
        return;
      case Socks5Parse::error:
        emit_error(*ctx_.events, "", 0, error);
        phase_ = Phase::done;  // not SOCKS5: nothing sensible to answer
        return;
      case Socks5Parse::complete:
        break;
    }
    in_.erase(0, greeting.consumed);
    down_.push(socks5_method_reply(greeting.no_auth_offered));
    reply_bytes_ += 2;
    if (!greeting.no_auth_offered) {
      emit_error(*ctx_.events, "", 0, "SOCKS5 client offers no acceptable method (only no-authentication)");
      start_draining();
      return;
    }
    phase_ = Phase::socks_request;
  }
  Socks5Request request;
  switch (parse_socks5_request(in_, request, error)) {
    case Socks5Parse::incomplete:
      return;
    case Socks5Parse::error:
      emit_error(*ctx_.events, request.host, request.port, error);
      refuse_socks(request.refusal);
      return;
    case Socks5Parse::complete:
      break;
  }
  in_.erase(0, request.consumed);
  auto host = normalise_host(request.host);
  port_ = request.port;
  if (!host) {
    host_ = request.host.substr(0, 255);
    deny("not a valid host name", "host-name check");
    return;
  }
  host_ = *host;
  begin_decision();
}

void Connection::on_http_head() {
  HeadParse parsed = parse_request_head(in_, ctx_.options.max_header_bytes);
  switch (parsed.status) {
    case HeadStatus::incomplete:
      return;
    case HeadStatus::too_large:
      refuse_http(431, "Request Header Fields Too Large", parsed.error);
      return;
    case HeadStatus::malformed:
      refuse_http(400, "Bad Request", parsed.error);
      return;
    case HeadStatus::complete:
      break;
  }
  if (parsed.head.method != "CONNECT") {
    mode_ = Mode::forward;
    on_request_head(parsed.head, parsed.consumed);
    return;
  }
  in_.erase(0, parsed.consumed);  // anything after the head is the tunnel's first bytes
  auto authority = parse_authority(parsed.head.target, std::nullopt);
  if (!authority) {
    refuse_http(400, "Bad Request", "CONNECT target: " + authority.status().message());
    return;
  }
  host_ = authority->host;
  port_ = authority->port;
  begin_decision();
}

void Connection::on_request_head(const HttpRequestHead& head, size_t consumed) {
  in_.erase(0, consumed);
  auto refuse = [this](int code, std::string reason, std::string body) {
    after_current_upstream([this, code, reason, body] { refuse_http(code, reason, body); });
  };
  if (head.method == "CONNECT") {
    refuse(400, "Bad Request", "CONNECT after forwarded requests on the same connection");
    return;
  }
  auto target = parse_absolute_target(head.target);
  if (!target) {
    refuse(400, "Bad Request", target.status().message());
    return;
  }
  HttpRequestHead forwarded = head;
  if (head.count("host") > 1) {
    refuse(400, "Bad Request", "several Host headers");
    return;
  }
  if (const std::string* host_header = head.header("host")) {
    auto authority = parse_authority(*host_header, 80);
    if (!authority || !(*authority == target->origin)) {
      Authority origin = target->origin;
      std::string reason = "Host header `" + host_header->substr(0, 256) + "` does not match the request target `" +
                           origin.host + ":" + std::to_string(origin.port) + "`";
      after_current_upstream([this, origin, reason] {
        host_ = origin.host;
        port_ = origin.port;
        deny(reason, "host-header check");
      });
      return;
    }
  } else if (head.version == "HTTP/1.1") {
    refuse(400, "Bad Request", "HTTP/1.1 request without a Host header");
    return;
  } else {
    forwarded.headers.push_back({"Host", target->origin.port == 80 ? target->origin.host
                                                                   : target->origin.host + ":" +
                                                                         std::to_string(target->origin.port)});
  }
  auto framing = request_body_framing(head);
  if (!framing) {
    refuse(400, "Bad Request", framing.status().message());
    return;
  }
  body_ = framing->kind == BodyKind::chunked ? BodyState::chunked
          : framing->kind == BodyKind::length ? BodyState::length
                                              : BodyState::none;
  body_left_ = framing->length;
  chunked_ = ChunkedScanner();
  std::string serialized = serialise_forward_head(forwarded, target->path);
  if (upstream_open_ && !switch_pending_ && target->origin.host == host_ && target->origin.port == port_) {
    up_.push(serialized);
    return;
  }
  Authority origin = target->origin;
  after_current_upstream([this, origin, serialized] {
    host_ = origin.host;
    port_ = origin.port;
    pending_head_ = serialized;
    begin_decision();
  });
}

void Connection::after_current_upstream(std::function<void()> action) {
  if (upstream_open_) {
    switch_pending_ = true;
    pending_action_ = std::move(action);
  } else {
    action();
  }
}

void Connection::refuse_http(int code, std::string_view reason, std::string_view body) {
  if (mode_ == Mode::transparent) {
    // The caller believes it is connected to its destination: nothing to answer in a protocol; a reset says
    // the connection failed.
    linger reset{1, 0};
    setsockopt(client_.fd.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    close_upstream();
    phase_ = Phase::done;
    return;
  }
  std::string response = http_error_response(code, reason, std::string("oishell relay: ") + std::string(body));
  reply_bytes_ += response.size();
  down_.push(response);
  start_draining();
}

void Connection::refuse_socks(Socks5Reply code) {
  std::string reply = socks5_reply(code);
  down_.push(reply);
  reply_bytes_ += reply.size();
  start_draining();
}

void Connection::deny(std::string_view reason, std::string_view rule) {
  emit_denied(*ctx_.events, protocol_name(), host_, port_, reason, rule);
  if (mode_ == Mode::socks) {
    refuse_socks(Socks5Reply::not_allowed);
    return;
  }
  std::string body = "connection to " + host_ + ":" + std::to_string(port_) + " denied (" + std::string(reason) +
                     "); rule: " + std::string(rule);
  refuse_http(403, "Forbidden", body);
}

void Connection::fail(int http_code, std::string_view http_reason, Socks5Reply socks_code, std::string_view reason) {
  emit_error(*ctx_.events, host_, port_, reason);
  if (mode_ == Mode::socks) {
    refuse_socks(socks_code);
  } else {
    refuse_http(http_code, http_reason, host_ + ":" + std::to_string(port_) + ": " + std::string(reason));
  }
}

void Connection::start_draining() {
  close_upstream();
  up_.discard_buffered();
  in_.clear();
  phase_ = Phase::draining;
  set_deadline(kDrainMs);
}

bool Connection::drive_draining() {
  bool progressed = false;
  if (!down_.flush(client_, progressed).is_ok()) return true;
  if (down_.pending() > 0) return false;
  if (!client_shut_) {
    client_shut_ = true;
    ::shutdown(client_.fd.get(), SHUT_WR);
  }
  // Read and drop what the client still sends, so that closing does not reset the connection before the
  // client has read the answer.
  char sink[16 * 1024];
  while (true) {
    ssize_t n = ::read(client_.fd.get(), sink, sizeof sink);
    if (n == 0) return true;
    if (n < 0) return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
}

bool Connection::on_timer(Clock::time_point now) {
  if (phase_ == Phase::done) return true;
  if (has_deadline_ && now >= deadline_) {
    has_deadline_ = false;
    switch (phase_) {
      case Phase::socks_greeting:
      case Phase::socks_request:
        return true;
      case Phase::http_head:
        refuse_http(408, "Request Timeout",
                    "no complete request within " + std::to_string(ctx_.options.header_timeout_ms) + " ms");
        break;
      case Phase::asking:
        deny("no answer within " + std::to_string(ctx_.options.ask_timeout_ms) + " ms", "ask: timed out");
        break;
      case Phase::resolving:
        fail(504, "Gateway Timeout", Socks5Reply::ttl_expired, "name resolution timed out");
        break;
      case Phase::connecting:
        last_connect_error_ = "connect timed out";
        close_upstream();
        try_next_candidate();
        break;
      case Phase::draining:
        return true;
      case Phase::tunnel:
      case Phase::forwarding:
      case Phase::done:
        break;
    }
    return drive();
  }
  if (now >= idle_check_) {
    auto idle = std::chrono::milliseconds(ctx_.options.idle_timeout_ms);
    if (now - last_activity_ >= idle) {
      emit_error(*ctx_.events, host_, port_, "idle for " + std::to_string(ctx_.options.idle_timeout_ms) + " ms");
      return true;
    }
    idle_check_ = last_activity_ + idle;
    ctx_.timers.push(idle_check_, id_);
  }
  return false;
}

}  // namespace oishell::relay
