#pragma once
// The relay: the sandbox's only network exit. Listener sockets are created inside the sandbox's network namespace
// (by sandbox init) and handed to the supervisor, which serves them here, outside, opening upstream connections in
// the host namespace after deciding on each one from the NetworkSpec. One event loop on its own thread.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"
#include "runtime/relay/sandbox_credentials.h"
#include "runtime/relay/tls_authority.h"
#include "runtime/outside/events.h"

struct seccomp_notif;
namespace oishell::broker {
struct BrokerContext;
class NameMap;  // runtime/broker/name_map.h
}  // namespace oishell::broker

namespace oishell::relay {

enum class Protocol { http, socks5 };

struct Listener {
  UniqueFd fd;  // listening, non-blocking
  Protocol protocol = Protocol::http;
};

enum class AskAnswer { allow_once, allow_always, deny };

struct AskRequest {
  uint64_t id = 0;
  std::string host;
  uint16_t port = 0;
};

// Called on the relay thread when on_unlisted is `ask`; the answer comes back through Relay::answer() from any
// thread. A question not answered within ask_timeout_ms is denied.
using AskHandler = std::function<void(const AskRequest&)>;

// What a live change of the network policy did (Relay::update_network).
struct NetworkUpdate {
  uint64_t closed_connections = 0;   // relay connections (HTTP, SOCKS5, joined) to destinations no longer allowed
  uint64_t ended_associations = 0;   // datagram associations to destinations no longer allowed
  uint64_t applied_us = 0;           // from the call to the new rules in force (queued on a running loop and back)
  uint64_t work_us = 0;              // of which the loop's own work: the rules replaced, open connections checked
};

struct RelayOptions {
  uint32_t ask_timeout_ms = 60'000;
  uint32_t connect_timeout_ms = 10'000;
  uint32_t idle_timeout_ms = 300'000;
  uint32_t max_header_bytes = 64 * 1024;
  uint32_t header_timeout_ms = 10'000;  // from accept to a complete request head / SOCKS request
  uint32_t max_connections = 1024;
};

class Relay {
 public:
  static Result<std::unique_ptr<Relay>> create(const NetworkSpec& spec, EventSink& events, AskHandler ask,
                                               RelayOptions options = {});
  virtual ~Relay() = default;
  // Takes the listeners and registers them with the relay's event loop; nothing is accepted until serve().
  virtual Status listen(std::vector<Listener> listeners) = 0;
  // The sandbox's DNS stub (runtime/broker/dns_stub.h) on the relay's loop: bound UDP sockets and listening TCP
  // sockets (from sandbox init), answered from the relay's NetworkSpec with addresses of `names` (which must
  // outlive the relay); names are looked up with the relay's resolver. Before serve() (the loop is not shared
  // with a running thread), after listen() or before; once. A query waiting also makes activity_fd() readable.
  virtual Status serve_dns(std::vector<UniqueFd> udp, std::vector<UniqueFd> tcp, broker::NameMap& names) = 0;
  // The datagram relay (runtime/relay/datagram_relay.h) on the relay's loop: bound UDP sockets inside the sandbox
  // (from sandbox init), at most one per family. Before start_broker() (which hands it to the broker) and serve();
  // once. Without it the broker refuses every UDP destination outside.
  virtual Status serve_datagrams(std::vector<UniqueFd> inner) = 0;
  // Readable (poll) once a listener has a connection waiting, so that an owner can start the thread only when the
  // sandbox first uses the network.
  virtual int activity_fd() const = 0;
  // Starts the relay thread, which accepts and serves. Once.
  virtual Status serve() = 0;
  // listen() and serve().
  Status start(std::vector<Listener> listeners) {
    Status listening = listen(std::move(listeners));
    return listening.is_ok() ? serve() : listening;
  }
  virtual void answer(uint64_t ask_id, AskAnswer answer) = 0;
  // Replaces the network section every decision reads (connections, the connect broker, the DNS stub, datagram
  // associations; policy/live_network.h says what may change): the next connection, DNS answer and association are
  // decided by `spec`, and open connections and associations it no longer allows are closed (net.closed with the
  // reason). The machine's own addresses (host_addresses) are kept. From any thread; returns once in force. The
  // decisions themselves read the spec as before: nothing is added to their path.
  virtual Result<NetworkUpdate> update_network(NetworkSpec spec) = 0;
  // The connect broker on this relay's loop (runtime/broker/broker.h), before serve(): the relay fills in the
  // loop, the resolver, the join hooks and the HTTP listener's port; the rest comes from the supervisor.
  virtual Status start_broker(broker::BrokerContext context) = 0;
  // A notification of a brokered call, from any thread (queued for the loop). Without a broker: EACCES.
  virtual void broker_submit(const seccomp_notif& notification) = 0;
  // Before serve(): the loop also watches the seccomp listener `fd` and calls `ready` when it is readable, so that
  // a brokered call reaches the broker without a second thread's wake-up. `ready` returns false when the fd is
  // broken (it is then dropped). Whoever polled the fd before must stop: one reader at a time.
  virtual Status watch_notifications(int fd, std::function<bool()> ready) = 0;
  // TLS termination (issue 16) for the hosts whose allow rules say `tls: terminate`, before serve(): the sandbox's
  // certificate authority and its credentials (runtime/outside/https_setup.h). Without it a connection such a rule
  // decides is refused: a terminating rule never becomes a passthrough one.
  virtual Status enable_termination(std::unique_ptr<TlsAuthority> authority, SandboxCredentials credentials) = 0;
  // Stops the thread and closes every connection. Idempotent; the destructor calls it.
  virtual void stop() = 0;
};

}  // namespace oishell::relay
