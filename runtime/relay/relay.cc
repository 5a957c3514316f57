// The relay: one thread, one epoll loop serving the listeners, the connections, c-ares' sockets, the ask answers
// and the deadlines. Everything a connection does happens on this thread; answer() and stop() only queue and wake.
#include "runtime/relay/relay.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <map>
#include <optional>
#include <unordered_map>
#include <arpa/inet.h>

#include <linux/seccomp.h>
#include <sys/ioctl.h>

#include "runtime/broker/broker.h"
#include "runtime/broker/dns_stub.h"
#include "runtime/broker/name_map.h"
#include "runtime/relay/audit.h"
#include "runtime/relay/connection.h"
#include "runtime/relay/datagram_relay.h"
#include "runtime/relay/event_loop.h"
#include "runtime/relay/host_addresses.h"
#include "runtime/relay/http_parser.h"
#include "runtime/relay/network_change.h"
#include "runtime/relay/resolver.h"

namespace oishell::relay {
namespace {

constexpr uint64_t kListenerTagBit = uint64_t{1} << 63;
constexpr uint64_t kNotifyTag = ~uint64_t{0} - 1;  // the seccomp listener (watch_notifications)
constexpr int kMaxEvents = 256;
constexpr int kAcceptBurst = 64;

// Each connection holds 2 fds (client and upstream sockets): make room, within the hard limit.
void raise_fd_limit(uint32_t max_connections) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  rlim_t want = static_cast<rlim_t>(max_connections) * 2 + 256;
  if (lim.rlim_cur >= want) return;
  lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? want : std::min(want, lim.rlim_max);
  setrlimit(RLIMIT_NOFILE, &lim);
}

class RelayImpl final : public Relay {
 public:
  RelayImpl(const NetworkSpec& spec, EventSink& events, AskHandler ask, RelayOptions options, EventLoop loop)
      : loop_(std::move(loop)), ask_handler_(std::move(ask)) {
    ctx_.spec = spec;
    ctx_.options = options;
    ctx_.events = &events;
    ctx_.loop = &loop_;
    ctx_.resolve = [this](uint64_t conn, const std::string& name) {
      resolve_name(name, [this, conn](Result<std::vector<IpAddress>> r) {
        resolved_.emplace_back(conn, std::move(r));  // handled by the loop, after the current event
      });
    };
    ctx_.ask = [this](uint64_t conn, const std::string& host, uint16_t port) {
      uint64_t id = next_ask_id_++;
      asks_[id] = conn;
      emit_ask(*ctx_.events, id, host, port);
      if (ask_handler_) {
        ask_handler_(AskRequest{id, host, port});
      } else {
        answer(id, AskAnswer::deny);  // nobody to ask
      }
      return id;
    };
  }
  ~RelayImpl() override { stop(); }

  // Looks `name` up; `done` runs on the loop, never from inside this call.
  void resolve_name(const std::string& name, std::function<void(Result<std::vector<IpAddress>>)> done) {
    // Made at the first name to look up: a sandbox that never connects by name never pays for c-ares.
    if (!resolver_) {
      auto created = Resolver::create(loop_);
      if (!created) {
        later_.push_back([done, status = created.status().with_context("relay resolver")] { done(status); });
        return;
      }
      resolver_ = std::move(*created);
    }
    resolver_->resolve(name, [this, done](Result<std::vector<IpAddress>> r) {
      later_.push_back([done, r = std::move(r)]() mutable { done(std::move(r)); });
    });
  }

  Status enable_termination(std::unique_ptr<TlsAuthority> authority, SandboxCredentials credentials) override {
    if (thread_.joinable()) return Status::error("relay: enable_termination() after serve()");
    if (!authority) return Status::error("relay: enable_termination() without an authority");
    auto client_facing = HttpsTerminator::client_facing_context(*authority);
    if (!client_facing) return client_facing.status().with_context("relay: the sandbox-facing TLS context");
    ctx_.termination = std::make_unique<Termination>();
    ctx_.termination->client_facing = std::move(client_facing).value();
    ctx_.termination->authority = std::move(authority);
    ctx_.termination->credentials = std::move(credentials);
    return Status::ok();
  }

  Status start_broker(broker::BrokerContext context) override {
    if (thread_.joinable() || broker_) return Status::error("relay: start_broker() after serve() or twice");
    context.loop = &loop_;
    context.spec = &ctx_.spec;
    context.events = ctx_.events;
    context.connect_timeout_ms = ctx_.options.connect_timeout_ms;
    context.resolve = [this](const std::string& name, std::function<void(Result<std::vector<IpAddress>>)> done) {
      resolve_name(name, std::move(done));
    };
    context.name_of = ctx_.name_of;
    context.datagrams = datagrams_.get();
    context.join_port = 0;
    for (const Listener& l : listeners_) {
      if (l.protocol == Protocol::http) context.join_port = ctx_.spec.http_proxy_port;
    }
    context.expect_join = [this](const std::string& client, const std::string& host, uint16_t port) {
      joins_[client] = {host, port};
    };
    context.cancel_join = [this](const std::string& client) { joins_.erase(client); };
    notify_fd_for_refusals_ = context.notify_fd;
    broker_ = std::make_unique<broker::Broker>(std::move(context));
    return Status::ok();
  }

  Status watch_notifications(int fd, std::function<bool()> ready) override {
    if (thread_.joinable() || notify_ready_) return Status::error("relay: watch_notifications() after serve() or twice");
    OI_TRY_CTX(loop_.add(fd, EPOLLIN, kNotifyTag), "relay: seccomp listener");
    notify_watched_fd_ = fd;
    notify_ready_ = std::move(ready);
    return Status::ok();
  }

  void broker_submit(const seccomp_notif& notification) override {
    if (broker_ && std::this_thread::get_id() == loop_thread_) {
      broker_->submit(notification);  // read on this loop (watch_notifications): no queue, no wake-up
      return;
    }
    {
      std::lock_guard<std::mutex> lock(answers_mu_);
      submitted_.push_back(notification);
    }
    loop_.wake();
  }

  Status listen(std::vector<Listener> listeners) override {
    if (!listeners_.empty() || stopped_) return Status::error("relay: listen() called twice");
    raise_fd_limit(ctx_.options.max_connections);
    nodelay_inherited_.clear();
    for (size_t i = 0; i < listeners.size(); ++i) {
      int fd = listeners[i].fd.get();
      if (fd < 0) return Status::error("relay: listener " + std::to_string(i) + " has no socket");
      int flags = fcntl(fd, F_GETFL);
      if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        return Status::from_errno(errno, "fcntl(listener, O_NONBLOCK)");
      }
      OI_TRY_CTX(loop_.add(fd, EPOLLIN, kListenerTagBit | i), "relay listener");
      // The relay forwards segments as they come: never hold a small one back (Nagle). Accepted sockets inherit
      // TCP_NODELAY from their listener, which saves a setsockopt per connection; set it per socket otherwise.
      int one = 1;
      nodelay_inherited_.push_back(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0);
    }
    listeners_ = std::move(listeners);
    return Status::ok();
  }

  Status serve_dns(std::vector<UniqueFd> udp, std::vector<UniqueFd> tcp, broker::NameMap& names) override {
    if (dns_ || thread_.joinable() || stopped_) return Status::error("relay: serve_dns() after serve() or twice");
    names_ = &names;
    ctx_.name_of = [&names](const IpAddress& address) { return names.name_of(address); };
    dns_ = std::make_unique<broker::DnsStub>(
        loop_, ctx_.spec, names, *ctx_.events,
        [this](const std::string& name, broker::DnsStub::ResolveDone done) { resolve_name(name, std::move(done)); });
    return dns_->serve(std::move(udp), std::move(tcp)).with_context("relay: dns");
  }

  Status serve_datagrams(std::vector<UniqueFd> inner) override {
    if (datagrams_ || broker_ || thread_.joinable() || stopped_) {
      return Status::error("relay: serve_datagrams() after start_broker() or serve(), or twice");
    }
    auto datagrams = std::make_unique<DatagramRelay>(loop_, *ctx_.events);
    OI_TRY_CTX(datagrams->serve(std::move(inner)), "relay");
    datagrams_ = std::move(datagrams);
    return Status::ok();
  }

  int activity_fd() const override { return loop_.fd(); }

  Result<NetworkUpdate> update_network(NetworkSpec spec) override {
    const auto began = std::chrono::steady_clock::now();
    std::future<NetworkUpdate> applied;
    {
      std::lock_guard<std::mutex> serving(serve_mu_);  // serve() does not start the thread meanwhile
      if (stopped_ || stopping_) return Status::error("relay: stopped; the network policy cannot change");
      if (!thread_.joinable()) {
        // Nothing runs on the loop yet: in force at once, on this thread.
        NetworkUpdate update = apply_network(std::move(spec));
        update.applied_us = elapsed_us(began);
        return update;
      }
      std::promise<NetworkUpdate> promise;
      applied = promise.get_future();
      {
        std::lock_guard<std::mutex> lock(answers_mu_);
        updates_.emplace_back(std::move(spec), std::move(promise));
        updates_pending_.store(true, std::memory_order_release);
      }
    }
    loop_.wake();
    try {
      NetworkUpdate update = applied.get();
      update.applied_us = elapsed_us(began);
      return update;
    } catch (const std::future_error&) {
      return Status::error("relay: stopped before the network policy changed");
    }
  }

  Status serve() override {
    std::lock_guard<std::mutex> serving(serve_mu_);
    if (thread_.joinable() || stopped_) return Status::error("relay: serve() called twice");
    if (listeners_.empty() && !broker_) return Status::error("relay: serve() with neither listeners nor a broker");
    thread_ = std::thread([this] {
      loop_thread_ = std::this_thread::get_id();
      run();
    });
    pthread_setname_np(thread_.native_handle(), "oishell-relay");
    return Status::ok();
  }

  void answer(uint64_t ask_id, AskAnswer answer) override {
    {
      std::lock_guard<std::mutex> lock(answers_mu_);
      answers_.emplace_back(ask_id, answer);
    }
    loop_.wake();
  }

  void stop() override {
    {
      std::lock_guard<std::mutex> serving(serve_mu_);
      stopping_ = true;
    }
    if (thread_.joinable()) {
      loop_.wake();
      thread_.join();
    }
    stopped_ = true;
    {
      std::lock_guard<std::mutex> lock(answers_mu_);
      updates_.clear();  // their callers see a broken promise: not applied
    }
    dns_.reset();
    conns_.clear();
    broker_.reset();  // answers what is still pending: refused
    datagrams_.reset();  // ends every association: nothing forwards any more
    refuse_submitted();
    for (Listener& l : listeners_) {
      if (l.fd) loop_.remove(l.fd.get());
    }
    listeners_.clear();
  }

 private:
  void run() {
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);  // belt and braces: every send() passes MSG_NOSIGNAL
    epoll_event events[kMaxEvents];
    std::vector<uint64_t> due;
    while (!stopping_) {
      Clock::time_point now = Clock::now();
      int timeout = ctx_.timers.next_timeout_ms(now);
      int dns = resolver_ ? resolver_->next_timeout_ms() : -1;
      if (dns >= 0 && (timeout < 0 || dns < timeout)) timeout = dns;
      int brokered = broker_ ? broker_->next_timeout_ms() : -1;
      if (brokered >= 0 && (timeout < 0 || brokered < timeout)) timeout = brokered;
      int stub = dns_ ? dns_->next_timeout_ms() : -1;
      if (stub >= 0 && (timeout < 0 || stub < timeout)) timeout = stub;
      int idle = datagrams_ ? datagrams_->next_timeout_ms() : -1;
      if (idle >= 0 && (timeout < 0 || idle < timeout)) timeout = idle;
      auto n = loop_.wait(timeout, events, kMaxEvents);
      if (!n) {
        emit_error(*ctx_.events, "", 0, "relay stopped: " + n.status().message());
        return;
      }
      for (int i = 0; i < *n; ++i) dispatch(events[i].data.u64, events[i].events);
      if (resolver_) resolver_->on_timeout();
      run_later();
      if (dns_) dns_->on_timer();  // also answers the stub's queries whose resolutions completed above
      complete_resolutions();
      complete_answers();
      take_updates();
      take_submitted();
      if (broker_) broker_->on_timer();
      if (datagrams_) datagrams_->on_timer();
      run_later();
      due.clear();
      ctx_.timers.pop_due(Clock::now(), due);
      for (uint64_t id : due) {
        if (auto it = conns_.find(id); it != conns_.end() && it->second->on_timer(Clock::now())) conns_.erase(it);
      }
    }
  }

  void dispatch(uint64_t tag, uint32_t events) {
    if (tag == EventLoop::kWakeTag) {
      loop_.drain_wake();
    } else if (tag == kNotifyTag) {
      // Level-triggered: one notification per call, the rest at the next wait.
      if (notify_ready_ && !notify_ready_()) {
        loop_.remove(notify_watched_fd_);
        notify_ready_ = nullptr;
      }
    } else if (tag & kListenerTagBit) {
      accept_from(tag & ~kListenerTagBit);
    } else if (DatagramRelay::owns(tag)) {
      if (datagrams_) datagrams_->on_event(tag, events);
    } else if (broker::DnsStub::owns(tag)) {
      if (dns_) dns_->on_event(tag, events);
    } else if (broker_ && broker_->owns(tag)) {
      broker_->on_event(tag, events);
    } else if ((tag & Resolver::kResolverTagBit) && resolver_) {
      resolver_->on_event(static_cast<int>(tag & 0xffffffff), events);
    } else if (auto it = conns_.find(tag >> 2); it != conns_.end()) {
      if (it->second->on_event(static_cast<Role>(tag & 3), events)) conns_.erase(it);
    }
  }

  // Accepts what waits on listener `index`: a new connection each, or the broker's join (take_join).
  void accept_from(size_t index) {
    if (index >= listeners_.size()) return;
    const Listener& listener = listeners_[index];
    for (int i = 0; i < kAcceptBurst; ++i) {
      UniqueFd fd(accept4(listener.fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!fd) {
        if (errno == EMFILE || errno == ENFILE) {
          emit_error(*ctx_.events, "", 0, Status::from_errno(errno, "accept4").message());
        }
        return;  // EAGAIN: nothing more now; other errors concern only that one client
      }
      if (conns_.size() >= ctx_.options.max_connections) {
        refuse_over_limit(listener.protocol, fd.get());
        continue;
      }
      if (!nodelay_inherited_[index]) {
        int one = 1;
        setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      }
      uint64_t id = next_conn_id_++;
      std::optional<JoinTarget> joined;
      if (listener.protocol == Protocol::http && !joins_.empty()) joined = take_join(fd.get());
      auto conn = joined ? std::make_unique<Connection>(ctx_, id, joined->host, joined->port, std::move(fd))
                         : std::make_unique<Connection>(ctx_, id, listener.protocol, std::move(fd));
      if (!conn->start().is_ok()) continue;
      auto& placed = conns_.emplace(id, std::move(conn)).first->second;
      if (joined && placed->begin_transparent()) conns_.erase(id);
    }
  }

  struct JoinTarget {
    std::string host;
    uint16_t port = 0;
  };

  // The broker's joined connection this accepted socket is, by its peer address (the caller's bound port).
  std::optional<JoinTarget> take_join(int fd) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return std::nullopt;
    char host[INET6_ADDRSTRLEN] = "?";
    uint16_t port = 0;
    if (peer.ss_family == AF_INET) {
      auto* sin = reinterpret_cast<sockaddr_in*>(&peer);
      inet_ntop(AF_INET, &sin->sin_addr, host, sizeof host);
      port = ntohs(sin->sin_port);
    } else if (peer.ss_family == AF_INET6) {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(&peer);
      inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof host);
      port = ntohs(sin6->sin6_port);
    }
    auto it = joins_.find(std::string(host) + ":" + std::to_string(port));
    if (it == joins_.end()) return std::nullopt;
    JoinTarget target = std::move(it->second);
    joins_.erase(it);
    return target;
  }

  void run_later() {
    while (!later_.empty()) {
      auto batch = std::move(later_);
      later_.clear();
      for (auto& f : batch) f();
    }
  }

  void take_submitted() {
    std::vector<seccomp_notif> batch;
    {
      std::lock_guard<std::mutex> lock(answers_mu_);
      batch.swap(submitted_);
    }
    for (const auto& n : batch) {
      if (broker_) {
        broker_->submit(n);
      } else {
        refuse(n);
      }
    }
  }

  void refuse_submitted() {
    std::vector<seccomp_notif> batch;
    {
      std::lock_guard<std::mutex> lock(answers_mu_);
      batch.swap(submitted_);
    }
    for (const auto& n : batch) refuse(n);
  }

  void refuse(const seccomp_notif& n) {
    if (notify_fd_for_refusals_ < 0) return;
    seccomp_notif_resp resp{};
    resp.id = n.id;
    resp.error = -EACCES;
    ::ioctl(notify_fd_for_refusals_, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }

  void refuse_over_limit(Protocol protocol, int fd) {
    std::string reason = "more than " + std::to_string(ctx_.options.max_connections) + " connections";
    emit_denied(*ctx_.events, protocol == Protocol::socks5 ? "socks5" : "http", "", 0, reason, "max_connections");
    if (protocol == Protocol::http) {
      std::string response = http_error_response(503, "Service Unavailable", "oishell relay: " + reason);
      [[maybe_unused]] ssize_t n = ::send(fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }

  static uint64_t elapsed_us(std::chrono::steady_clock::time_point since) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - since).count());
  }

  // Once per turn of the loop: one relaxed-cost load when nothing changes (no lock taken).
  void take_updates() {
    if (!updates_pending_.load(std::memory_order_acquire)) return;
    std::vector<std::pair<NetworkSpec, std::promise<NetworkUpdate>>> batch;
    {
      std::lock_guard<std::mutex> lock(answers_mu_);
      batch.swap(updates_);
      updates_pending_.store(false, std::memory_order_relaxed);
    }
    for (auto& [spec, promise] : batch) promise.set_value(apply_network(std::move(spec)));
  }

  // On the loop (or before it runs): the new rules in force, then what they no longer allow closed.
  NetworkUpdate apply_network(NetworkSpec spec) {
    const auto began = std::chrono::steady_clock::now();
    NetworkUpdate update;
    spec.host_addresses = ctx_.spec.host_addresses;  // the machine's, found when the relay was made
    // The terminators of open connections point at rules of the spec they were decided with: kept until they end.
    retired_.push_back(std::make_unique<NetworkSpec>(std::move(ctx_.spec)));
    ctx_.spec = std::move(spec);
    bool terminated_open = false;
    for (auto it = conns_.begin(); it != conns_.end();) {
      std::string why = it->second->policy_refusal();
      if (!why.empty() || (it->second->terminated() && retired_.size() > kMaxRetiredSpecs)) {
        it->second->end_for_policy(why.empty() ? "policy changed: HTTPS rules kept through too many changes" : why);
        it = conns_.erase(it);
        ++update.closed_connections;
        continue;
      }
      terminated_open = terminated_open || it->second->terminated();
      ++it;
    }
    if (!terminated_open) retired_.clear();
    if (broker_) {
      // Connections the broker installed (inspect: false) go kernel to kernel: shut down in the sandbox itself.
      auto closed = broker_->close_installed(
          [this](const std::string& host, uint16_t port, const std::string& address) {
            return refusal_after_change(ctx_.spec, host, port, address, HostRule::Protocol::tcp, /*uninspected=*/true);
          });
      for (const auto& c : closed) emit_closed(*ctx_.events, c.host, c.port, 0, 0, 0, c.reason);
      update.closed_connections += closed.size();
    }
    if (datagrams_) {
      update.ended_associations = datagrams_->end_refused([this](const DatagramTarget& target) {
        return refusal_after_change(ctx_.spec, target.host, target.port, target.address, HostRule::Protocol::udp,
                                    /*uninspected=*/false);
      });
    }
    update.work_us = elapsed_us(began);
    return update;
  }

  void complete_resolutions() {
    while (!resolved_.empty()) {
      auto batch = std::move(resolved_);
      resolved_.clear();
      for (auto& [id, result] : batch) {
        if (auto it = conns_.find(id); it != conns_.end() && it->second->on_resolved(std::move(result))) {
          conns_.erase(it);
        }
      }
    }
  }

  void complete_answers() {
    std::vector<std::pair<uint64_t, AskAnswer>> batch;
    {
      std::lock_guard<std::mutex> lock(answers_mu_);
      batch.swap(answers_);
    }
    for (auto [ask_id, answer] : batch) {
      auto ask = asks_.find(ask_id);
      if (ask == asks_.end()) continue;
      uint64_t id = ask->second;
      asks_.erase(ask);
      if (auto it = conns_.find(id); it != conns_.end() && it->second->ask_id() == ask_id &&
                                     it->second->on_answer(answer)) {
        conns_.erase(it);
      }
    }
    complete_resolutions();
  }

  EventLoop loop_;
  RelayContext ctx_;
  std::unique_ptr<Resolver> resolver_;
  std::unique_ptr<DatagramRelay> datagrams_;  // serve_datagrams(); the broker holds a pointer: destroyed after it
  std::unique_ptr<broker::Broker> broker_;
  std::map<std::string, JoinTarget> joins_;  // by the joined client's address, "127.0.0.1:40000"
  std::vector<std::function<void()>> later_;  // callbacks to run on the loop after the current event
  std::vector<seccomp_notif> submitted_;      // from broker_submit(), with answers_mu_
  int notify_fd_for_refusals_ = -1;
  int notify_watched_fd_ = -1;
  std::atomic<std::thread::id> loop_thread_{};  // the relay's thread, once it runs
  std::function<bool()> notify_ready_;  // watch_notifications()
  std::unique_ptr<broker::DnsStub> dns_;  // serve_dns()
  broker::NameMap* names_ = nullptr;      // serve_dns(): the stub's synthetic addresses
  AskHandler ask_handler_;
  std::vector<Listener> listeners_;
  std::vector<bool> nodelay_inherited_;  // per listener
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> conns_;
  std::vector<std::pair<uint64_t, Result<std::vector<IpAddress>>>> resolved_;
  std::unordered_map<uint64_t, uint64_t> asks_;  // ask id -> connection id
  uint64_t next_conn_id_ = 1;
  uint64_t next_ask_id_ = 1;
  std::mutex answers_mu_;
  std::vector<std::pair<uint64_t, AskAnswer>> answers_;
  std::vector<std::pair<NetworkSpec, std::promise<NetworkUpdate>>> updates_;  // with answers_mu_
  std::atomic<bool> updates_pending_{false};  // updates_ is not empty
  // Specs replaced while a terminated connection was open (apply_network); at most kMaxRetiredSpecs.
  static constexpr size_t kMaxRetiredSpecs = 32;
  std::vector<std::unique_ptr<NetworkSpec>> retired_;
  std::mutex serve_mu_;  // serve() against update_network() deciding whether the loop runs
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<Relay>> Relay::create(const NetworkSpec& spec, EventSink& events, AskHandler ask,
                                             RelayOptions options) {
  // Mode none: no listeners, only the connect broker on its loop (unix sockets, the sandbox's own loopback).
  if (options.max_connections == 0 || options.max_header_bytes < 1024) {
    return Status::error("relay: max_connections must be > 0 and max_header_bytes >= 1024");
  }
  NetworkSpec guarded = spec;
  OI_TRY_CTX(add_host_addresses(guarded), "relay");  // the guard refuses this machine's own addresses too
  auto loop = EventLoop::create();
  if (!loop) return loop.status().with_context("relay");
  auto relay = std::make_unique<RelayImpl>(guarded, events, std::move(ask), options, std::move(*loop));
  return std::unique_ptr<Relay>(std::move(relay));
}

}  // namespace oishell::relay
