#pragma once
// One client connection to the relay, from the first byte of its handshake to the close: HTTP CONNECT,
// absolute-form HTTP forwarding or SOCKS5; the decision (deny/allow/ask), resolution, the private-address guard,
// the upstream connect, the first-bytes checks (TLS server name, HTTP Host), and the data path. Driven by the relay's loop, single-threaded.
//   connection.cc           lifecycle, handshakes, refusals, timers
//   connection_upstream.cc  decision, ask, resolution, connect
//   connection_data.cc      tunnel and forwarding data paths
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "policy/sandbox_spec.h"
#include "runtime/relay/event_loop.h"
#include "runtime/relay/http_parser.h"
#include "runtime/relay/https_terminator.h"
#include "runtime/relay/pump.h"
#include "runtime/relay/relay.h"
#include "runtime/relay/socks5.h"
#include "runtime/relay/tunnel_inspect.h"

namespace oishell::relay {

// TLS termination (issue 16): the sandbox's authority and credentials, and one upstream context per trust (the
// host's store, or a rule's upstream_ca), made when first needed.
struct Termination {
  std::unique_ptr<TlsAuthority> authority;
  SslCtxPtr client_facing;  // HttpsTerminator::client_facing_context(*authority), shared by every connection
  SandboxCredentials credentials;
  std::map<std::string, SslCtxPtr> upstream_contexts;  // by upstream_ca ("" = the system store)
  Result<SSL_CTX*> upstream_context(const std::string& ca_file);
};

// What connections share, owned by the relay.
struct RelayContext {
  NetworkSpec spec;
  RelayOptions options;
  EventSink* events = nullptr;
  EventLoop* loop = nullptr;
  TimerQueue timers;
  std::set<std::string> session_allowed;  // "host port" answered allow-always
  // Large data-path buffers of all connections together (pump.h): 64 MiB, as Linux's default per-user pipe quota.
  BufferBudget buffers{64u << 20};
  // Starts a resolution; the relay calls Connection::on_resolved with the result (if the connection still lives).
  std::function<void(uint64_t conn_id, const std::string& name)> resolve;
  // The name the DNS stub gave a synthetic address (runtime/broker/name_map.h); empty before serve_dns().
  std::function<std::optional<std::string>(const IpAddress&)> name_of;
  // Asks the AskHandler; the relay calls Connection::on_answer (or on_timer denies). Returns the ask id.
  std::function<uint64_t(uint64_t conn_id, const std::string& host, uint16_t port)> ask;
  std::unique_ptr<Termination> termination;  // null: no rule terminates (or not enabled: such a rule refuses)
};

// epoll tags: connection id << 2 | role.
enum class Role : uint64_t { client = 0, upstream = 1 };
inline uint64_t conn_tag(uint64_t id, Role role) { return id << 2 | static_cast<uint64_t>(role); }

class Connection {
 public:
  Connection(RelayContext& ctx, uint64_t id, Protocol protocol, UniqueFd client);
  // A connection the connect broker joined to the relay (runtime/broker): `CONNECT host:port` without the
  // handshake or the 200 reply; a refusal closes it with a reset.
  Connection(RelayContext& ctx, uint64_t id, std::string host, uint16_t port, UniqueFd client);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Status start();  // registers the client socket
  // For a joined connection, after start(): decides. True when it is already finished.
  bool begin_transparent();
  // Each returns true when the connection is finished and may be destroyed.
  bool on_event(Role role, uint32_t events);
  bool on_resolved(Result<std::vector<IpAddress>> addresses);
  bool on_answer(AskAnswer answer);
  bool on_timer(Clock::time_point now);
  uint64_t ask_id() const { return ask_id_; }
  // After the network policy changed (Relay::update_network, ctx.spec replaced): why this connection's destination
  // is no longer allowed as it is being carried out (denied now, left to a question it was never asked, inspected
  // now, other HTTPS rules, its address no longer exempt from the guard), or "" when it may go on. A connection
  // waiting for an answer that is denied now is refused here at once.
  std::string policy_refusal();
  // Ends the connection for `reason` (its net.closed carries it); destroy it afterwards.
  void end_for_policy(std::string reason);
  // Its terminator holds rules of the NetworkSpec it was decided with (https_terminator.h: TerminatedRule).
  bool terminated() const { return !terminating_.empty(); }

 private:
  enum class Phase { socks_greeting, socks_request, http_head, asking, resolving, connecting, tunnel, forwarding,
                     draining, done };
  enum class Mode { connect, forward, socks, transparent };
  enum class BodyState { none, length, chunked };

  // connection.cc
  bool drive();
  bool read_client_into(std::string& into, size_t limit, bool& progressed);
  void on_socks_bytes();
  void on_http_head();
  void on_request_head(const HttpRequestHead& head, size_t consumed);
  // Runs `action` now, or, while an upstream is open, after its exchange has ended (a request for another origin,
  // or a refusal that must not cut into a response still flowing).
  void after_current_upstream(std::function<void()> action);
  void refuse_http(int code, std::string_view reason, std::string_view body);
  void refuse_socks(Socks5Reply code);
  void deny(std::string_view reason, std::string_view rule);
  void fail(int http_code, std::string_view http_reason, Socks5Reply socks_code, std::string_view reason);
  void start_draining();
  bool drive_draining();
  void set_deadline(uint32_t ms);
  void close_upstream();
  std::string_view protocol_name() const;

  // connection_upstream.cc
  void begin_decision();
  void after_allow(std::string rule);
  void begin_connect(std::vector<IpAddress> candidates);
  void try_next_candidate();
  bool on_upstream_writable_while_connecting();
  void on_connected();

  // connection_data.cc
  bool drive_tunnel();
  // connection_terminated.cc: a tunnel whose host a `tls: terminate` rule decides (https_terminator.h).
  bool start_terminator();
  bool drive_terminated();
  void emit_terminator_events();
  bool drive_forwarding();
  bool inspect_tunnel();
  Status advance_requests();

  RelayContext& ctx_;
  uint64_t id_;
  Mode mode_ = Mode::connect;
  Phase phase_;
  Endpoint client_;
  Endpoint upstream_;
  Direction up_;    // client -> upstream
  Direction down_;  // upstream -> client
  std::string in_;  // client bytes being parsed (handshakes, forwarded request stream)
  bool client_eof_ = false;
  bool upstream_eof_ = false;        // a terminated tunnel: the upstream's end of file, told to the terminator
  bool client_closed_told_ = false;  // a terminated tunnel: the client's end of file, told to the terminator

  // The current destination.
  std::string host_;
  uint16_t port_ = 0;
  std::string rule_;
  bool inspect_ = true;  // the deciding rule's `inspect`: a tunnel's first bytes are checked (tunnel_inspect.h)
  std::optional<TunnelInspector> inspector_;
  std::vector<TerminatedRule> terminating_;  // the terminating rules matching host:port (empty: not terminated)
  std::unique_ptr<HttpsTerminator> terminator_;
  std::vector<IpAddress> candidates_;
  size_t next_candidate_ = 0;
  std::string last_connect_error_;
  std::string address_;  // the checked address connected to
  uint64_t ask_id_ = 0;

  // Forwarding: the request waiting for its upstream, the framing of the body being forwarded.
  std::string pending_head_;
  bool switch_pending_ = false;
  std::function<void()> pending_action_;
  BodyState body_ = BodyState::none;
  uint64_t body_left_ = 0;
  ChunkedScanner chunked_;

  Clock::time_point started_;
  Clock::time_point upstream_started_;
  Clock::time_point last_activity_;
  Clock::time_point deadline_;
  bool has_deadline_ = false;
  Clock::time_point idle_check_;
  bool upstream_open_ = false;  // net.allowed emitted; net.closed due
  uint64_t reply_bytes_ = 0;    // our own replies in down_ (not counted as bytes_down)
  bool client_shut_ = false;
  std::string closed_reason_;  // end_for_policy(): in net.closed
};

}  // namespace oishell::relay
