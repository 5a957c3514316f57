#pragma once
// The sandbox's DNS stub: UDP and TCP sockets on 127.0.0.1 and ::1 inside the sandbox (opened by sandbox init,
// runtime/inside/netns.h), served outside on the relay's event loop. It answers from the policy, never with a real
// address and never asking upstream for a name the sandbox may not reach (docs/network.md, "DNS inside the
// sandbox"):
//   deny  -> NXDOMAIN and a `net.denied` event (protocol "dns", port 0); no upstream query;
//   ask   -> A/AAAA: the name's synthetic address (NameMap) without any upstream query: the question is asked at
//            connect time, with the port (the broker);
//   allow -> looked up for real (a pinned `hosts:` address, else the injected resolve callback); each address
//            passes the private-address guard; A/AAAA: the synthetic address when an address of that family
//            survived, NODATA when the name has none of that family (or only the other one survived), NXDOMAIN
//            when it does not exist, SERVFAIL on a resolver error or timeout, REFUSED and `net.denied` when the
//            guard refused every address.
// "localhost" and names under it (RFC 6761): 127.0.0.1 and ::1, the sandbox's own loopback, whatever the policy
// says (no event, no upstream query); their other types NODATA.
// Other types of allowed or asked names: NODATA, no upstream query. PTR of a synthetic address given out: its
// name; any other name under in-addr.arpa / ip6.arpa: NXDOMAIN. Malformed: FORMERR; opcodes but QUERY: NOTIMP;
// classes but IN: REFUSED; EDNS versions above 0: BADVERS.
// Single-threaded: every method runs on the loop's thread (the NameMap is the only state shared).
#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"
#include "runtime/broker/dns_message.h"
#include "runtime/broker/name_map.h"
#include "runtime/outside/events.h"
#include "runtime/relay/event_loop.h"

namespace oishell::broker {

struct DnsStubOptions {
  uint32_t ttl_seconds = 60;             // of every answer record
  uint32_t max_pending = 256;            // queries waiting for a resolution; beyond: SERVFAIL at once
  uint32_t max_tcp_connections = 64;     // beyond: accepted and closed at once
  uint32_t resolve_timeout_ms = 5'000;   // a resolution not back by then: SERVFAIL (before a libc's first retry)
  uint32_t tcp_idle_timeout_ms = 10'000;  // a TCP client with nothing outstanding and silent that long: closed
  uint32_t max_tcp_output = 64 * 1024;   // answers a TCP client has not read; beyond: closed
  uint32_t denial_repeat_ms = 2'000;     // the same denial of the same name is reported once per this (a lookup
                                         // asks for A and AAAA; resolvers retry)
};

class DnsStub {
 public:
  using ResolveDone = std::function<void(Result<std::vector<IpAddress>>)>;
  // Looks a name up for real (outside). `done` may be called before resolve() returns, or later on the loop's
  // thread. A failure says what it was through its errno_value(): ENOENT the name does not exist (NXDOMAIN),
  // ENODATA it exists without an address (NODATA), anything else (SERVFAIL). An empty list counts as ENODATA.
  using Resolve = std::function<void(const std::string& name, ResolveDone done)>;

  // Tags of the stub's registrations have bit 61 set and bits 62 and 63 clear (the relay: 63 listeners, 62
  // c-ares, low values connections, all bits its wake-up).
  static constexpr uint64_t kDnsTagBit = uint64_t{1} << 61;
  static bool owns(uint64_t tag) { return (tag >> 61) == 1; }

  // `spec`, `names` and `events` must outlive the stub.
  DnsStub(relay::EventLoop& loop, const NetworkSpec& spec, NameMap& names, EventSink& events, Resolve resolve,
          DnsStubOptions options = {});
  ~DnsStub();  // removes its fds from the loop and closes them; resolutions still out are dropped
  DnsStub(const DnsStub&) = delete;
  DnsStub& operator=(const DnsStub&) = delete;

  // Registers bound UDP sockets and listening TCP sockets (made non-blocking here). Once.
  Status serve(std::vector<UniqueFd> udp_sockets, std::vector<UniqueFd> tcp_listeners);
  // An epoll event for one of the stub's tags (owns(tag)).
  void on_event(uint64_t tag, uint32_t events);
  // Answers the queries whose resolutions completed. on_event() and on_timer() do it themselves; the loop calls
  // it after anything else that may complete a resolution (the resolver's own events and timeouts).
  void run_completions();
  // Milliseconds until the stub's next deadline (resolution timeouts, idle TCP clients), -1 when none.
  int next_timeout_ms() const;
  // Handles the deadlines that are due (cheap when none is).
  void on_timer();

  size_t tcp_connections() const { return conns_.size(); }
  size_t pending_queries() const { return pending_queries_; }

 private:
  struct Origin {
    bool tcp = false;
    size_t udp_index = 0;
    sockaddr_storage peer{};
    socklen_t peer_len = 0;
    uint64_t conn = 0;
  };
  struct Waiter {
    dns::Query query;
    Origin origin;
  };
  struct Pending {
    std::string name;
    std::vector<Waiter> waiters;
  };
  struct TcpConn {
    UniqueFd fd;
    std::vector<uint8_t> in;
    std::vector<uint8_t> out;
    relay::Clock::time_point last_active;
    uint32_t waiting = 0;  // queries of this client waiting for a resolution
    bool eof = false;      // the client shut its write side: close once everything is answered
    bool broken = false;   // a send failed, or the client does not read its answers: to be closed
  };

  void read_udp(size_t index, uint64_t tag);
  void accept_tcp(size_t index, uint64_t tag);
  void on_tcp_event(uint64_t id, uint32_t events);
  // Reads, answers, writes; false when the connection is to be closed.
  bool serve_tcp(TcpConn& conn, uint64_t id);
  // Sends what is queued; false (and `broken` set) on failure or when more than max_tcp_output stays unread.
  bool flush_tcp(TcpConn& conn);
  void close_tcp(uint64_t id);
  // Closes `id` when it is broken, or done (EOF from the client, nothing waiting, everything sent).
  void close_if_finished(uint64_t id);

  void handle_message(std::span<const uint8_t> message, const Origin& origin);
  void answer_query(dns::Query query, const Origin& origin);
  void look_up(const std::string& name, dns::Query query, const Origin& origin);
  void complete(uint64_t pending_id, Result<std::vector<IpAddress>> result);
  void answer_address(const dns::Query& query, const Origin& origin, const std::string& name);
  void reply(const dns::Query& query, const Origin& origin, dns::Rcode rcode,
             const std::vector<dns::Record>& answers = {});
  void report_denied(const std::string& name, const std::string& reason, const std::string& rule);
  void report_error(const std::string& name, const std::string& reason);
  bool recently_reported(const std::string& key);

  relay::EventLoop& loop_;
  const NetworkSpec& spec_;
  NameMap& names_;
  EventSink& events_;
  Resolve resolve_;
  DnsStubOptions options_;
  bool serving_ = false;
  std::vector<UniqueFd> udp_;
  std::vector<UniqueFd> listeners_;
  std::unordered_map<uint64_t, TcpConn> conns_;
  uint64_t next_conn_id_ = 1;
  std::unordered_map<uint64_t, Pending> pending_;            // by resolution id
  std::unordered_map<std::string, uint64_t> pending_names_;  // name -> resolution id (A and AAAA share one)
  size_t pending_queries_ = 0;
  uint64_t next_pending_id_ = 1;
  std::vector<std::pair<uint64_t, Result<std::vector<IpAddress>>>> completed_;
  relay::TimerQueue timers_;
  std::unordered_map<std::string, relay::Clock::time_point> reported_;  // denial key -> when
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);          // for resolutions that outlive the stub
};

}  // namespace oishell::broker
