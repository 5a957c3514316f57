// Connection: the decision (deny / allow / ask), resolution, the private-address guard and the upstream connect.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/status.h"
#include "runtime/relay/audit.h"
#include "runtime/relay/connection.h"
#include "runtime/relay/tls_upstream.h"

namespace oishell::relay {
namespace {

constexpr uint32_t kUpstreamEdgeEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
// Per-direction buffers: downloads dominate; uploads get less. These bound the relay's memory per connection.
constexpr size_t kDownBufferBytes = 1024 * 1024;
constexpr size_t kUpBufferBytes = 256 * 1024;

std::string session_key(const std::string& host, uint16_t port) { return host + " " + std::to_string(port); }

// The `tls: terminate` rules that match host:port, in policy order, with the credentials each declares; none when an
// allow rule that does not terminate matches too (a passthrough grant is the larger one, as `inspect: false` is;
// `allow_all` is not such a rule: a terminating rule still reads its host's requests under it).
std::vector<TerminatedRule> terminating_rules(const RelayContext& ctx, const std::string& host, uint16_t port) {
  std::vector<TerminatedRule> out;
  for (const HostRule& rule : ctx.spec.allow) {
    if (rule.protocol != HostRule::Protocol::tcp || !rule.matches(host, port)) continue;
    if (rule.tls != HostRule::Tls::terminate) return {};
    TerminatedRule terminated;
    terminated.rule = &rule;
    if (ctx.termination) terminated.bindings = ctx.termination->credentials.bindings_for(rule);
    out.push_back(std::move(terminated));
  }
  return out;
}

}  // namespace

Result<SSL_CTX*> Termination::upstream_context(const std::string& ca_file) {
  auto found = upstream_contexts.find(ca_file);
  if (found != upstream_contexts.end()) return found->second.get();
  auto made = upstream_client_context(ca_file);
  if (!made.is_ok()) return made.status();
  SSL_CTX* context = made->get();
  upstream_contexts.emplace(ca_file, std::move(made.value()));
  return context;
}

std::string Connection::policy_refusal() {
  switch (phase_) {
    case Phase::http_head:
      // Between two forwarded requests: the next is decided by the new rules, but the upstream kept alive for the
      // last one must not outlive its allowance.
      if (mode_ != Mode::forward || !upstream_.fd) return "";
      break;
    case Phase::socks_greeting:
    case Phase::socks_request:
    case Phase::draining:
    case Phase::done:
      return "";  // nothing decided yet, or nothing carried any more
    case Phase::asking:
    case Phase::resolving:
    case Phase::connecting:
    case Phase::tunnel:
    case Phase::forwarding:
      break;
  }
  if (host_.empty()) return "";
  NetDecision decision = decide(ctx_.spec, host_, port_);
  if (decision.verdict == NetDecision::Verdict::deny) return "policy changed: denied now (" + decision.rule + ")";
  if (phase_ == Phase::asking) return "";  // the user's answer decides, as it would have
  bool answered = rule_.starts_with("ask:") || ctx_.session_allowed.count(session_key(host_, port_));
  if (decision.verdict == NetDecision::Verdict::ask && !answered) {
    return "policy changed: no longer allowed by a rule (now " + decision.rule + ")";
  }
  if (decision.verdict == NetDecision::Verdict::allow && decision.inspect && !inspect_) {
    return "policy changed: now inspected (" + decision.rule + ")";
  }
  std::vector<TerminatedRule> now = decision.verdict == NetDecision::Verdict::allow
                                        ? terminating_rules(ctx_, host_, port_)
                                        : std::vector<TerminatedRule>{};
  bool same_rules = now.size() == terminating_.size() &&
                    std::equal(now.begin(), now.end(), terminating_.begin(),
                               [](const TerminatedRule& a, const TerminatedRule& b) { return *a.rule == *b.rule; });
  if (!same_rules) return "policy changed: its HTTPS rules changed";
  if (!address_.empty()) {
    if (auto address = IpAddress::parse(address_)) {
      if (std::string why = check_resolved_address(ctx_.spec, *address); !why.empty()) {
        return "policy changed: " + why;
      }
    }
  }
  return "";
}

void Connection::end_for_policy(std::string reason) {
  closed_reason_ = std::move(reason);
  if (phase_ == Phase::asking) ask_id_ = 0;
  close_upstream();
  phase_ = Phase::done;
}

void Connection::begin_decision() {
  has_deadline_ = false;
  // A client that resolved the name inside (socks5:// rather than socks5h://) asks for the stub's synthetic
  // address: decided, resolved and checked as the name it stands for.
  if (ctx_.name_of) {
    if (auto literal = IpAddress::parse(host_)) {
      if (auto name = ctx_.name_of(*literal)) host_ = *name;
    }
  }
  NetDecision decision = decide(ctx_.spec, host_, port_);
  inspect_ = decision.inspect;  // true for ask answers and allow_all
  terminating_ = decision.verdict == NetDecision::Verdict::allow ? terminating_rules(ctx_, host_, port_)
                                                                 : std::vector<TerminatedRule>{};
  switch (decision.verdict) {
    case NetDecision::Verdict::deny:
      deny("denied by policy", decision.rule);
      return;
    case NetDecision::Verdict::allow:
      after_allow(decision.rule);
      return;
    case NetDecision::Verdict::ask:
      if (ctx_.session_allowed.count(session_key(host_, port_))) {
        after_allow("ask: allowed for the session");
        return;
      }
      if (std::string refusal = check_known_destination(ctx_.spec, host_); !refusal.empty()) {
        deny(refusal, "private-address guard");  // never asked: no answer could let it through
        return;
      }
      phase_ = Phase::asking;
      set_deadline(ctx_.options.ask_timeout_ms);
      ask_id_ = ctx_.ask(id_, host_, port_);
      return;
  }
}

bool Connection::on_answer(AskAnswer answer) {
  if (phase_ != Phase::asking) return false;
  ask_id_ = 0;
  switch (answer) {
    case AskAnswer::allow_once:
      after_allow("ask: allowed once");
      break;
    case AskAnswer::allow_always:
      ctx_.session_allowed.insert(session_key(host_, port_));
      after_allow("ask: allowed for the session");
      break;
    case AskAnswer::deny:
      deny("denied when asked", "ask: denied");
      break;
  }
  return drive();
}

void Connection::after_allow(std::string rule) {
  rule_ = std::move(rule);
  if (!terminating_.empty()) {
    // Fail closed: a rule that reads requests is never carried out as one that does not.
    if (!ctx_.termination) {
      deny("the rule ends TLS and this relay was not given the sandbox's certificate authority", rule_);
      return;
    }
    if (mode_ == Mode::forward) {
      deny("the rule ends TLS: its host is reached over https only", rule_);
      return;
    }
  }
  if (auto literal = IpAddress::parse(host_)) {
    begin_connect({*literal});
    return;
  }
  if (auto pin = ctx_.spec.hosts.find(host_); pin != ctx_.spec.hosts.end()) {
    auto pinned = IpAddress::parse(pin->second);
    if (!pinned) {
      fail(502, "Bad Gateway", Socks5Reply::host_unreachable, "pinned address `" + pin->second + "` is not an IP");
      return;
    }
    begin_connect({*pinned});
    return;
  }
  phase_ = Phase::resolving;
  set_deadline(ctx_.options.connect_timeout_ms);
  ctx_.resolve(id_, host_);  // the answer arrives through on_resolved, never from inside this call
}

bool Connection::on_resolved(Result<std::vector<IpAddress>> addresses) {
  if (phase_ != Phase::resolving) return false;
  has_deadline_ = false;
  if (!addresses) {
    fail(502, "Bad Gateway", Socks5Reply::host_unreachable, addresses.status().message());
  } else {
    begin_connect(std::move(*addresses));
  }
  return drive();
}

void Connection::begin_connect(std::vector<IpAddress> addresses) {
  candidates_.clear();
  std::string first_refusal;
  for (const IpAddress& a : addresses) {
    std::string why = check_resolved_address(ctx_.spec, a);
    if (why.empty()) {
      candidates_.push_back(a);
    } else if (first_refusal.empty()) {
      first_refusal = why;
    }
  }
  if (candidates_.empty()) {
    deny(first_refusal, "private-address guard");
    return;
  }
  next_candidate_ = 0;
  last_connect_error_.clear();
  try_next_candidate();
}

void Connection::try_next_candidate() {
  while (next_candidate_ < candidates_.size()) {
    const IpAddress& a = candidates_[next_candidate_++];
    sockaddr_storage ss{};
    socklen_t len;
    if (a.family == IpAddress::Family::v4) {
      auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
      sin->sin_family = AF_INET;
      sin->sin_port = htons(port_);
      std::memcpy(&sin->sin_addr, a.bytes.data(), 4);
      len = sizeof(sockaddr_in);
    } else {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons(port_);
      std::memcpy(&sin6->sin6_addr, a.bytes.data(), 16);
      len = sizeof(sockaddr_in6);
    }
    UniqueFd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      last_connect_error_ = Status::from_errno(errno, "socket").message();
      continue;
    }
    int one = 1;
    setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    address_ = a.to_string();
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS) {
      last_connect_error_ = Status::from_errno(errno, "connect(" + address_ + ")").message();
      continue;
    }
    if (!ctx_.loop->add(fd.get(), kUpstreamEdgeEvents, conn_tag(id_, Role::upstream)).is_ok()) {
      last_connect_error_ = "epoll_ctl failed";
      continue;
    }
    upstream_.fd = std::move(fd);
    upstream_.readable = upstream_.writable = false;
    phase_ = Phase::connecting;
    set_deadline(ctx_.options.connect_timeout_ms);
    return;
  }
  bool refused = last_connect_error_.find("ECONNREFUSED") != std::string::npos;
  bool timed_out = last_connect_error_.find("timed out") != std::string::npos;
  fail(timed_out ? 504 : 502, timed_out ? "Gateway Timeout" : "Bad Gateway",
       refused ? Socks5Reply::connection_refused : timed_out ? Socks5Reply::ttl_expired : Socks5Reply::host_unreachable,
       last_connect_error_);
}

bool Connection::on_upstream_writable_while_connecting() {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(upstream_.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    last_connect_error_ = Status::from_errno(err, "connect(" + address_ + ")").message();
    close_upstream();
    try_next_candidate();
  } else {
    on_connected();
  }
  return drive();
}

void Connection::on_connected() {
  has_deadline_ = false;
  upstream_open_ = true;
  upstream_started_ = last_activity_ = Clock::now();
  upstream_.writable = true;
  emit_allowed(*ctx_.events, protocol_name(), host_, port_, rule_, address_);
  down_.set_capacity(kDownBufferBytes, &ctx_.buffers);
  switch (mode_) {
    case Mode::connect:
    case Mode::socks:
    case Mode::transparent: {
      if (mode_ != Mode::transparent) {
        std::string reply = mode_ == Mode::socks ? socks5_reply(Socks5Reply::succeeded)
                                                 : std::string("HTTP/1.1 200 Connection established\r\n\r\n");
        reply_bytes_ += reply.size();
        down_.push(reply);
      }
      up_.set_capacity(kUpBufferBytes, &ctx_.buffers);
      phase_ = Phase::tunnel;
      if (!terminating_.empty()) {
        start_terminator();  // reads the client's TLS itself: nothing is gated
        break;
      }
      up_.set_gated(true);  // until the first client bytes show whether a TLS ClientHello names another host
      up_.push(in_);
      in_.clear();
      break;
    }
    case Mode::forward:
      up_.push(pending_head_);
      pending_head_.clear();
      phase_ = Phase::forwarding;
      break;
  }
}

}  // namespace oishell::relay
