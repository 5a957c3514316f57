#pragma once
// The connect broker: the supervisor performs every connect(2) of the sandbox (and every send that connects
// implicitly: MSG_FASTOPEN), answering the seccomp notification itself. The caller's sockaddr is read once and
// the connection made to that copy; the caller's call is never let through (no SECCOMP_USER_NOTIF_FLAG_CONTINUE),
// so memory rewritten after the check changes nothing.
//
//   sandbox socket, loopback destination   the caller's own socket connected by the supervisor (it stays in the
//                                          sandbox's network namespace: it can reach only the sandbox's own `lo`);
//                                          TCP ports as Landlock allows them inside
//   TCP to a name or address outside       decided as the relay decides a CONNECT (policy/net_rules.h):
//     allow, inspect: false                the supervisor connects a socket of its own (host namespace) to the
//                                          checked address and installs it in place of the caller's, once
//                                          established: bytes go kernel to kernel
//     allow, inspect: true; ask            the caller's socket joined to the relay's inspecting path (treated as
//                                          `CONNECT host:port`, without the 200 reply)
//     deny                                 EACCES and a net.denied event
//   UDP outside, a udp rule allows it      the caller's socket connected to the datagram relay's inner socket, and
//                                          an association recorded there (its local address -> a socket of the
//                                          supervisor's connected to the checked address): broker_udp.cc
//   UDP outside, otherwise (ping too)      ENETUNREACH and a net.denied event (DNS goes to the stub on `lo`)
//   unix, pathname                         allowed when the inode is on the sandbox's own tmpfs, is bound by a
//                                          socket of the sandbox's network namespace (a server inside), or is a
//                                          socket of `network.unix`; the caller's socket connected to that inode
//   unix, abstract; AF_UNSPEC              the caller's socket connected by the supervisor (abstract names are
//                                          per network namespace)
//   unix, every connect                    resolved and connected on a thread with the sandbox's ids and no
//                                          capabilities (as_sandbox.h): the kernel's permission checks and the
//                                          peer's SO_PEERCRED as for the sandbox's own connect
//   netlink                                to the kernel only (nl_pid and nl_groups 0): the caller's socket
//                                          connected by the supervisor; groups or a port id EPERM, as the kernel
//                                          answers a caller without CAP_NET_ADMIN (address_families.h)
//   any other family (socket or sockaddr)  EAFNOSUPPORT: never connected with the supervisor's rights
//   a socket the broker installed          any further connect is refused (EISCONN): it never points elsewhere
// Runs on the relay's loop thread (runtime/relay/relay.cc).
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/net_rules.h"
#include "policy/sandbox_spec.h"
#include "runtime/broker/as_sandbox.h"
#include "runtime/broker/caller.h"
#include "runtime/broker/denial_limiter.h"
#include "runtime/broker/installed_sockets.h"
#include "runtime/broker/sandbox_unix_sockets.h"
#include "runtime/broker/unix_target.h"
#include "runtime/outside/events.h"
#include "runtime/relay/event_loop.h"

namespace oishell::relay {
class DatagramRelay;  // runtime/relay/datagram_relay.h
}  // namespace oishell::relay

namespace oishell::broker {

// What the broker knows of the sandbox and uses of the relay.
struct BrokerContext {
  const NetworkSpec* spec = nullptr;
  EventSink* events = nullptr;
  relay::EventLoop* loop = nullptr;
  int notify_fd = -1;
  ino_t sandbox_netns = 0;  // the inode of the sandbox's network namespace
  int netns_fd = -1;        // that namespace and its user namespace (owned by the supervisor; outlive the broker)
  pid_t init_pid = -1;      // sandbox init: its pid namespace is the sandbox's (installed_sockets.h)
  int userns_fd = -1;
  // The sandbox's own tmpfs: their paths inside (the root, /tmp, ...), found beneath `root_fd`, init's root
  // (O_PATH; read in the constructor only). Never through a caller's root: a caller that changed its own (chroot,
  // a mount namespace of its own) would name a host filesystem as the sandbox's own.
  int root_fd = -1;
  std::vector<std::string> own_tmpfs;
  bool landlock_tcp = false;           // Landlock limits TCP ports inside: loopback connects keep its rules
  std::vector<uint16_t> loopback_tcp_ports;  // the ports Landlock lets the sandbox connect to
  uint32_t connect_timeout_ms = 10'000;
  // Looks a name up (the relay's resolver); the callback runs later on the loop thread.
  std::function<void(const std::string& name, std::function<void(Result<std::vector<IpAddress>>)>)> resolve;
  // The name the DNS stub gave a synthetic address, if any.
  std::function<std::optional<std::string>(const IpAddress&)> name_of;
  // The relay accepts, on its HTTP listener, a connection from `client` ("127.0.0.1:40000") as `CONNECT host:port`.
  std::function<void(const std::string& client, const std::string& host, uint16_t port)> expect_join;
  std::function<void(const std::string& client)> cancel_join;
  uint16_t join_port = 0;  // the relay's HTTP listener inside (0: no relay, mode none)
  relay::DatagramRelay* datagrams = nullptr;  // the datagram relay (null: every UDP destination outside refused)
  // The thread with the sandbox's ids and no capabilities that resolves unix socket paths and connects unix sockets
  // (null: every unix connect refused).
  std::unique_ptr<AsSandbox> as_sandbox;
};

class Broker {
 public:
  static constexpr uint64_t kTagBit = uint64_t{1} << 60;
  static constexpr size_t kMaxPending = 4096;
  // net.denied events a second at most; the rest are counted and reported in one event (denial_limiter.h).
  static constexpr uint32_t kDenialsPerSecond = 20;

  explicit Broker(BrokerContext ctx);
  ~Broker();  // answers every pending call with ECONNREFUSED
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // A notification of a brokered call (policy/seccomp_sets broker_rules), on the loop thread.
  void submit(const seccomp_notif& notification);
  static bool owns(uint64_t tag) { return (tag >> 60) == 1; }  // bit 60 alone (61: DNS, 62: c-ares, 63: listeners)
  void on_event(uint64_t tag, uint32_t events);
  int next_timeout_ms();
  void on_timer();
  // A narrowed network policy (relay::Relay::update_network): the sockets this broker installed (`inspect: false`)
  // whose destination `refusal` gives a reason for are shut down in the sandbox's processes; returns them.
  std::vector<InstalledSockets::Closed> close_installed(
      const std::function<std::string(const std::string& host, uint16_t port, const std::string& address)>& refusal) {
    return installed_.close_refused(refusal);
  }

 private:
  struct Request;
  void start(Request& r);
  void start_unix(Request& r);
  void start_inet(Request& r);
  void start_outside_tcp(Request& r, const std::string& host, bool literal);
  void start_join(Request& r);
  void start_direct(Request& r, std::vector<IpAddress> addresses);
  // The addresses of `host` (an IP literal, a `hosts:` pin, or the relay's resolver on the loop), then
  // start_direct() or start_datagrams() by the socket's type. A bad pin is refused with `pin_errno`.
  void resolve_then_start(Request& r, const std::string& host, bool literal, std::string_view protocol, int pin_errno);
  // UDP (broker_udp.cc): decided by the udp rules, resolved and guarded as TCP, then joined to the datagram relay.
  void start_outside_udp(Request& r, const std::string& host, bool literal);
  void start_datagrams(Request& r, std::vector<IpAddress> addresses);
  // Ends the datagram association of the caller's socket (its local address), if it has one.
  void forget_datagrams(Request& r);
  // Ends the associations of sockets the sandbox has closed (sock_diag), when all are taken.
  void reap_datagrams();
  void try_next_candidate(Request& r);
  // A fresh non-blocking TCP socket of `family` in the supervisor's namespace: the one kept standing by, made
  // after the last answer (off the caller's wait), or a new one.
  // Its inode in `*inode` (read when the standby was made; 0 when unknown).
  UniqueFd take_tcp_socket(int family, ino_t* inode);
  void refill_standby(int family);
  void install(Request& r);
  // connect(2) on the caller's own socket, as the caller would have made it (blocking or not).
  void connect_callers_socket(Request& r, const sockaddr* addr, socklen_t len);
  void wait_writable(Request& r, int fd);
  void on_writable(Request& r);
  // The supervisor's own socket has connected (err 0) or failed: install it, or try the next address.
  void finish_own_connect(Request& r, int err);
  void finish_callers_connect(Request& r, int err);
  void respond(Request& r, int64_t value, int err);
  // Answers `err` with a net.denied event (at most kDenialsPerSecond a second: report_suppressed()).
  void deny(Request& r, std::string_view protocol, std::string_view host, uint16_t port, std::string_view reason,
            std::string_view rule, int err);
  // The count of denials left unreported in a window that has ended by `now` (nullopt: at shutdown, whatever is
  // counted), as one net.denied event with `suppressed`.
  void report_suppressed(std::optional<relay::Clock::time_point> now);
  // A socket of the sandbox's own network namespace (not one the broker installed, nor one passed in).
  bool in_sandbox_netns(int sock);
  bool own_tmpfs(dev_t dev) const;
  // Bound by a socket of the sandbox's own network namespace (sandbox_unix_sockets.h).
  bool bound_inside(const struct stat& st);
  // The sock_diag socket in the sandbox's namespace, made at the first use; null when it could not be made.
  SandboxUnixSockets* sandbox_sockets();

  BrokerContext ctx_;
  std::map<uint64_t, std::unique_ptr<Request>> pending_;
  uint64_t next_key_ = 1;
  relay::TimerQueue timers_;
  DenialLimiter denials_{kDenialsPerSecond};
  std::optional<relay::Clock::time_point> summary_at_;  // the window end a timer (key kSummaryKey) is set for
  static constexpr uint64_t kSummaryKey = 0;  // request keys start at 1
  std::vector<dev_t> own_tmpfs_devs_;  // from the constructor on (none: every such socket refused unless listed)
  UniqueFd standby_v4_;
  UniqueFd standby_v6_;
  ino_t standby_v4_inode_ = 0;
  ino_t standby_v6_inode_ = 0;
  CallerFiles callers_;  // pidfds and fdinfo files of the threads that called last
  uint64_t sandbox_netns_cookie_ = 0;  // 0 until a socket of the sandbox's was seen
  std::optional<SandboxUnixSockets> sandbox_sockets_;
  bool sandbox_sockets_failed_ = false;
  InstalledSockets installed_;
};

}  // namespace oishell::broker
