#pragma once
// The datagram relay: how an allowed UDP destination is reached from the sandbox without a host socket inside it
// (a connected host datagram socket in the sandbox could sendto(2) any address).
//
// Inside the sandbox's network namespace, bound UDP sockets (the "inner" sockets: 127.0.0.2 and [::1], ephemeral
// ports; made by sandbox init, runtime/inside/netns.h) are served here, outside, on the relay's loop. The connect broker
// decides a sandboxed socket's connect(2) to a UDP destination (runtime/broker/broker_udp.cc), connects that socket
// to an inner socket and records an *association*: its local address -> a host-side UDP socket connected to the
// checked destination. Each datagram from that source is then sent on the host-side socket, and each datagram that
// socket receives (only the destination's: it is connected) is sent back to the source from the inner socket.
//
// - A datagram from a source without an association is dropped (counted): an inner socket is no way out by itself.
// - At most `max_associations` (256): the broker answers EAGAIN beyond. An association idle (no datagram either way)
//   for `idle_timeout_ms` (120 s) ends, with `net.closed`; so does one replaced by a new connect from the same
//   source, and every one when the relay stops (the inner sockets close with it: nothing forwards any more).
// - A datagram above `max_datagram` (65507 bytes, IPv4's largest UDP payload) is dropped; so is one that finds the
//   next socket's buffer full (EAGAIN, ENOBUFS): the relay keeps no queue of its own, the kernel's socket buffers
//   are the only queue, as on any UDP path.
// Single-threaded: every method runs on the loop's thread.
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "runtime/outside/events.h"
#include "runtime/relay/event_loop.h"

namespace oishell::relay {

struct DatagramOptions {
  uint32_t max_associations = 256;
  uint32_t idle_timeout_ms = 120'000;
  uint32_t max_datagram = 65'507;
  uint32_t burst = 64;  // datagrams handled per readiness of one socket before the loop serves the others
};

// A socket address, comparable (the association's key): an IPv4-mapped IPv6 address is kept as its IPv4 form, so
// a dual-stack socket that reaches the IPv4 inner socket is known by the address that socket sees.
struct DatagramSource {
  sockaddr_storage addr{};
  socklen_t len = 0;
  static DatagramSource from(const sockaddr_storage& ss, socklen_t len);
  std::string key() const;   // family, address bytes and port
  std::string text() const;  // "127.0.0.1:40000", "[::1]:40000"
};

// What an association forwards to, for its events.
struct DatagramTarget {
  std::string host;     // as decided (a name or an IP literal)
  uint16_t port = 0;
  std::string rule;     // the allow rule
  std::string address;  // the checked address the host-side socket is connected to
};

class DatagramRelay {
 public:
  // Tags of its registrations: bit 59 alone among the top five bits (the broker 60, the DNS stub 61, c-ares 62,
  // listeners 63). Bit 58 marks a host-side socket (the low bits its association's id), else an inner socket
  // (the low bits its index).
  static constexpr uint64_t kTagBit = uint64_t{1} << 59;
  static bool owns(uint64_t tag) { return (tag >> 59) == 1; }

  // `loop` and `events` must outlive the relay.
  DatagramRelay(EventLoop& loop, EventSink& events, DatagramOptions options = {});
  ~DatagramRelay();  // ends every association (net.closed), removes and closes every fd
  DatagramRelay(const DatagramRelay&) = delete;
  DatagramRelay& operator=(const DatagramRelay&) = delete;

  // Bound UDP sockets inside the sandbox (made non-blocking here), at most one per family. Once.
  Status serve(std::vector<UniqueFd> inner);
  // The inner socket's address a sandboxed socket of `domain` connects to: the IPv6 one for AF_INET6 when there is
  // one, else the IPv4 one (IPv4-mapped for an AF_INET6 socket). Empty when there is none for `domain`.
  std::optional<DatagramSource> inner_address(int domain) const;
  // Whether associate() would take one more association (expired ones are ended first).
  bool has_room();
  // From now on, datagrams from `source` go out through `upstream` (a UDP socket of the supervisor's, connected to
  // `target.address`), and its replies come back to `source`. Replaces an association of the same source.
  // EAGAIN when the relay holds max_associations already.
  Status associate(const DatagramSource& source, UniqueFd upstream, DatagramTarget target);
  // Ends the association of `source`, if any (the socket connected elsewhere).
  void forget(const DatagramSource& source);
  // Ends every association whose source is not in `live` (the sandbox's UDP sockets: the others were closed).
  void retain(const std::vector<DatagramSource>& live);
  // A policy change (Relay::update_network): ends every association for which `refusal` gives a reason (its
  // destination is no longer allowed), with net.closed carrying that reason. Returns how many ended.
  size_t end_refused(const std::function<std::string(const DatagramTarget&)>& refusal);

  void on_event(uint64_t tag, uint32_t events);
  int next_timeout_ms() const;  // until the next association expires; -1 when there is none
  void on_timer();
  size_t size() const { return by_source_.size(); }
  uint64_t dropped() const { return dropped_; }  // datagrams dropped (unknown source, too large, buffer full)

 private:
  struct Association {
    uint64_t id = 0;
    DatagramSource source;
    size_t inner = 0;  // the inner socket that answers it (by the source's family)
    UniqueFd upstream;
    DatagramTarget target;
    Clock::time_point started;
    Clock::time_point last_active;
    uint64_t bytes_up = 0;
    uint64_t bytes_down = 0;
  };
  void from_inner(size_t index);
  void from_upstream(uint64_t id);
  void end(std::map<std::string, Association>::iterator it, std::string_view reason = {});
  void expire(Clock::time_point now);

  EventLoop& loop_;
  EventSink& events_;
  DatagramOptions options_;
  std::vector<UniqueFd> inner_;
  std::vector<int> inner_family_;
  std::map<std::string, Association> by_source_;  // DatagramSource::key() -> association
  std::map<uint64_t, std::string> by_id_;         // association id -> its source key
  uint64_t next_id_ = 1;
  uint64_t dropped_ = 0;
  std::vector<char> buffer_;  // one datagram, max_datagram + 1 bytes (the extra byte shows a larger one)
};

}  // namespace oishell::relay
